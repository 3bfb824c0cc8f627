#!/usr/bin/env python3
# Interrupt a keyrouter command at a known point, without timing (tests/bats/ops_trial.bats):
#   ops_interrupt.py SIGNAL COMMAND [ARGS...]
# runs COMMAND with its standard error on a pipe that is already full, so the command blocks
# in its first write to standard error (for `keyrouter load`: the apply's first line, once
# the program is attached and its maps pinned); then sends SIGNAL (INT, TERM, ...), drains
# the pipe and prints what the command wrote to standard error after that point.  The exit
# status is the command's (128 + N when it died of signal N).
import fcntl, os, signal, subprocess, sys, time

def main():
    sig = getattr(signal, "SIG" + sys.argv[1])
    r, w = os.pipe()
    fl = fcntl.fcntl(w, fcntl.F_GETFL)
    fcntl.fcntl(w, fcntl.F_SETFL, fl | os.O_NONBLOCK)
    filler = 0
    try:
        while True:
            filler += os.write(w, b"\0" * 4096)
    except BlockingIOError:
        pass
    fcntl.fcntl(w, fcntl.F_SETFL, fl)
    p = subprocess.Popen(sys.argv[2:], stderr=w, stdout=subprocess.DEVNULL)
    os.close(w)
    # Wait until it blocks writing to fd 2 (a hang guard of 120 s, not a timing assumption).
    deadline = time.monotonic() + 120
    while True:
        try:
            with open("/proc/%d/syscall" % p.pid) as f:
                fields = f.read().split()
        except OSError:
            fields = []
        if len(fields) > 1 and fields[0] == "1" and int(fields[1], 16) == 2:
            break
        if p.poll() is not None or time.monotonic() > deadline:
            sys.stderr.write("ops_interrupt.py: the command never blocked on standard error\n")
            p.kill()
            return 99
        time.sleep(0.005)
    os.kill(p.pid, sig)
    out = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        out += chunk
    rc = p.wait()
    sys.stdout.write(out[filler:].decode("utf-8", "replace"))
    return 128 - rc if rc < 0 else rc

sys.exit(main())
