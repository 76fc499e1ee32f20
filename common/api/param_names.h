// Engine texts write a parameter as {name} ("{window} must be ..."): the
// engine runs under btl_rttcc and under mtl_rttcc, and each registers the
// same parameters with its own prefix.  Texts are named for their reader as
// they leave the engine's C API, from rttcc_config_t::param_prefix.
#pragma once
#include <string>

#include "rttcc/config.h"

namespace rttcc {

// The prefix texts name parameters with: param_prefix, or "btl_rttcc_".
const char *param_prefix(const rttcc_config_t &c);

// `text` with every {name} of an engine parameter (rttcc_config_params)
// written as prefix + name; other braces stay as they are.
std::string name_params(const std::string &text, const char *prefix);

}  // namespace rttcc
