#!/usr/bin/env python3
"""Sends exactly TOTAL keep-alive requests over CONNECTIONS connections and reads every response.

Usage: fixed-requests.py PORT get|post TOTAL CONNECTIONS

server-instructions.sh divides a server's instruction count by the number of requests it
served; wrk runs for a time and leaves requests in flight when it stops, which the server still
serves, so its count is off by up to one request a connection. Exits non-zero when a response
is not 2xx.
"""
import http.client
import json
import sys
import threading

port, route, total, connections = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
if route == "post":
    method, path = "POST", "/movies"
    body, headers = json.dumps({"title": "Load", "year": 2001}), {"Content-Type": "application/json"}
else:
    method, path, body, headers = "GET", "/movies/1", None, {}
failures = []


def send(count):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    for _ in range(count):
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        if not 200 <= response.status < 300:
            failures.append(response.status)
    connection.close()


threads = [
    threading.Thread(target=send, args=(total // connections + (1 if i < total % connections else 0),))
    for i in range(connections)
]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
if failures:
    sys.exit(f"{len(failures)} of {total} responses were not 2xx: {sorted(set(failures))}")
