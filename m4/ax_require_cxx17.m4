# AX_REQUIRE_CXX17: fail unless the C++ compiler accepts -std=c++17.
AC_DEFUN([AX_REQUIRE_CXX17], [
  AC_LANG_PUSH([C++])
  save_CXXFLAGS="$CXXFLAGS"; CXXFLAGS="$CXXFLAGS -std=c++17"
  AC_MSG_CHECKING([whether $CXX supports C++17])
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <optional>]], [[std::optional<int> o; (void)o;]])],
    [AC_MSG_RESULT([yes])], [AC_MSG_RESULT([no]); AC_MSG_ERROR([a C++17 compiler is required])])
  CXXFLAGS="$save_CXXFLAGS"
  AC_LANG_POP([C++])
])
