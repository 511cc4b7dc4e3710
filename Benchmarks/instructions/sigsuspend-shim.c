// Preloaded into a server run under valgrind 3.19 (Debian 12's) by server-instructions.sh.
//
// A Swift program whose async `main` suspends parks its main thread in libdispatch's
// `_dispatch_sig_thread`, which calls `sigsuspend` with a mask in read-only memory. valgrind 3.19
// writes to that mask as it handles the call and stops with an internal SIGSEGV. This
// `sigsuspend` hands the kernel a copy on the stack instead; it changes nothing else.
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

int sigsuspend(const sigset_t *mask) {
    sigset_t copy = *mask;
    return (int)syscall(SYS_rt_sigsuspend, &copy, _NSIG / 8);
}
