#!/usr/bin/python3
"""relay.py: the boot test's way for the agent, in a network namespace with
loopback only, to reach the S3 server on the host's loopback and nothing
else (tests/boot/cloud-init-boot.sh). A pathname UNIX socket is reached
through the file system, not the network namespace, so one relay on each
side of it joins the two loopbacks for one port.

    relay.py unix-to-tcp SOCK PORT
        (host side) listen on the UNIX socket SOCK; connect each connection
        to 127.0.0.1:PORT. Prints "ready" once listening.
    relay.py tcp-to-unix PORT SOCK -- CMD [ARG...]
        (namespace side) listen on 127.0.0.1:PORT, then execute CMD in this
        process (so CMD's PID is this one's, for its signals); a process
        outside CMD's tree relays each connection to SOCK and ends when
        CMD's process does.

Bytes are copied both ways until each side has closed; nothing is read.
"""
import os
import socket
import sys
import threading
import time


def fail(msg):
    sys.stderr.write("relay.py: %s\n" % msg)
    sys.exit(2)


def pump(src, dst):
    try:
        while True:
            b = src.recv(65536)
            if not b:
                break
            dst.sendall(b)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def join(a, b):
    t = threading.Thread(target=pump, args=(b, a), daemon=True)
    t.start()
    pump(a, b)
    t.join()
    a.close()
    b.close()


def serve(listener, connect):
    while True:
        c, _ = listener.accept()
        try:
            other = connect()
        except OSError as e:
            sys.stderr.write("relay.py: connect: %s\n" % e)
            c.close()
            continue
        threading.Thread(target=join, args=(c, other), daemon=True).start()


def tcp(port):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def unix(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


def start_time(pid):
    """pid's start time (clock ticks since boot), None once it is gone: a
    later process with the same number has another."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def main():
    a = sys.argv[1:]
    if len(a) == 3 and a[0] == "unix-to-tcp":
        sock, port = a[1], int(a[2])
        ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        ls.bind(sock)
        ls.listen(64)
        print("ready", flush=True)
        serve(ls, lambda: tcp(port))
    elif len(a) >= 5 and a[0] == "tcp-to-unix" and a[3] == "--":
        port, sock, cmd = int(a[1]), a[2], a[4:]
        ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("127.0.0.1", port))
        ls.listen(64)
        parent = os.getpid()
        born = start_time(parent)
        if os.fork() == 0:
            # Out of CMD's tree (a grandchild, reparented when its parent
            # exits): the agent's supervisor kills every descendant of its
            # process at a job's end (runner/supervise.c, sup_kill_all).
            os.setsid()
            if os.fork() != 0:
                os._exit(0)
            threading.Thread(target=serve, args=(ls, lambda: unix(sock)), daemon=True).start()
            while start_time(parent) == born:
                time.sleep(0.2)
            os._exit(0)
        os.wait()
        ls.close()
        os.execvp(cmd[0], cmd)
    else:
        fail("usage: relay.py unix-to-tcp SOCK PORT | tcp-to-unix PORT SOCK -- CMD...")


main()
