/* Objects Open MPI passes between threads through lock-free lists whose
 * atomics ThreadSanitizer cannot see (opal_lifo under opal_free_list, the
 * pml's request lists): released where rttcc gives one back, acquired
 * where it gets one, so that a -fsanitize=thread build sees the order.
 * Empty in every other build. */
#ifndef RTTCC_HANDOFF_H
#define RTTCC_HANDOFF_H

#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
static inline void rttcc_handoff_acquire(void *obj) { __tsan_acquire(obj); }
static inline void rttcc_handoff_release(void *obj) { __tsan_release(obj); }
#else
static inline void rttcc_handoff_acquire(void *obj) { (void) obj; }
static inline void rttcc_handoff_release(void *obj) { (void) obj; }
#endif

#endif
