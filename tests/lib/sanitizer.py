"""The environment for a process a test starts in the sanitizer run (meson test --setup asan).

The setup asks for ASan's full unwinder, which the leak suppressions of the unit tests need;
it costs 10-30x on allocation-heavy code, most on TLS. The simulator and the daemons the
integration tests start get the fast unwinder and no leak check at exit instead: their memory
errors and undefined behaviour still abort them. See doc/reliability.md, "CI time".
"""

import os


def fast_unwinder_env(env=None):
    """@env (default: this process's), with the fast unwinder and no exit leak check when
    ASAN_OPTIONS is set; unchanged otherwise."""
    env = dict(os.environ if env is None else env)
    if "ASAN_OPTIONS" in env:
        env["ASAN_OPTIONS"] += ":fast_unwind_on_malloc=1:detect_leaks=0"
    return env
