#!/usr/bin/env python3
"""A TCP proxy that holds every chunk for a fixed delay in each direction: a network delay
between the servers and PostgreSQL, on loopback (Benchmarks/round-trips.sh).

The kernel here has no `netem` qdisc (CONFIG_NET_SCH_NETEM is not set), so `tc netem` cannot
add the delay; this proxy does, with one reader and one writer thread a direction, each chunk
written `delay` after it was read (clock_nanosleep precision, order kept).

Usage: delay-proxy.py LISTEN_PORT TARGET_PORT DELAY_MS
"""
import collections
import socket
import sys
import threading
import time


def pump(source, target, delay):
    """Copies source to target, each chunk `delay` seconds after it arrived."""
    queue = collections.deque()
    ready = threading.Condition()

    def write():
        while True:
            with ready:
                while not queue:
                    ready.wait()
                due, chunk = queue.popleft()
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            if chunk is None:
                try:
                    target.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                return
            try:
                target.sendall(chunk)
            except OSError:
                return

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    while True:
        try:
            chunk = source.recv(65536)
        except OSError:
            chunk = b""
        with ready:
            queue.append((time.monotonic() + delay, chunk or None))
            ready.notify()
        if not chunk:
            return


def serve(listen_port, target_port, delay):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", listen_port))
    listener.listen(256)
    while True:
        client, _ = listener.accept()
        server = socket.create_connection(("127.0.0.1", target_port))
        for connection in (client, server):
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=pump, args=(client, server, delay), daemon=True).start()
        threading.Thread(target=pump, args=(server, client, delay), daemon=True).start()


if __name__ == "__main__":
    serve(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]) / 1000)
