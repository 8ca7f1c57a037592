#!/usr/bin/env python3
"""What slow clients do to a running server (issue 25's first two rows).

8 connections declare 8 MiB bodies and send a byte a second; meanwhile one
client creates 10-D sessions and tells each one's 16 candidates as 16
partial tells at once, with chunked bodies (no Content-Length). After
SECONDS it prints the answers counted by request and status, and when the
slow connections were cut (seconds from their start).

  go run ./cmd/server -addr 127.0.0.1:8080 -db /tmp/slow.db &
  python3 scripts/slowclients.py 127.0.0.1 8080 30

Standard library only.
"""

import collections
import http.client
import json
import socket
import sys
import threading
import time


def slow(host, port, stop, cut, i):
    """Declares an 8 MiB body and sends a byte a second until stop."""
    s = socket.create_connection((host, port))
    s.sendall(b"POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: 8388608\r\n\r\n")
    try:
        while time.monotonic() < stop:
            s.sendall(b" ")
            time.sleep(1)
    except OSError:
        cut[i] = time.monotonic()


def request(host, port, method, path, body=None, chunked=False):
    c = http.client.HTTPConnection(host, port, timeout=120)
    data = json.dumps(body).encode() if body is not None else None
    if chunked:
        c.putrequest(method, path)
        c.putheader("Content-Type", "application/json")
        c.putheader("Transfer-Encoding", "chunked")
        c.endheaders()
        c.send(b"%x\r\n%s\r\n0\r\n\r\n" % (len(data), data))
    else:
        c.request(method, path, body=data, headers={"Content-Type": "application/json"})
    r = c.getresponse()
    out = r.read()
    c.close()
    return r.status, out


def main():
    host, port, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    t0 = time.monotonic()
    stop = t0 + seconds
    cut = {}
    for i in range(8):
        threading.Thread(target=slow, args=(host, port, stop, cut, i), daemon=True).start()
    time.sleep(1)
    counts = collections.Counter()
    while time.monotonic() < stop:
        st, out = request(host, port, "POST", "/v1/sessions", {"x0": [1.0] * 10, "sigma0": 0.5, "population_size": 16})
        counts[("create", st)] += 1
        if st != 201:
            time.sleep(0.2)
            continue
        sid = json.loads(out)["id"]
        batch = json.loads(request(host, port, "GET", f"/v1/sessions/{sid}/ask")[1])
        got = [None] * 16

        def tell(i):
            x = batch["candidates"][i]
            body = {"generation": 0, "indices": [i], "fitness": [sum(v * v for v in x)]}
            got[i] = request(host, port, "POST", f"/v1/sessions/{sid}/tell", body, chunked=True)[0]

        threads = [threading.Thread(target=tell, args=(i,)) for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for st in got:
            counts[("chunked tell", st)] += 1
    print(dict(counts), "slow connections cut after", sorted(round(v - t0) for v in cut.values()), "s")


if __name__ == "__main__":
    main()
