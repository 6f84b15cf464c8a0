#!/usr/bin/env python
# -*- coding: utf-8 -*-
"""A dumb Ethernet hub for QEMU `-netdev socket,connect=` links (labs of 3+ VMs).

QEMU's stream socket netdev frames each packet as a 4-byte big-endian length
followed by the frame. The hub listens on 127.0.0.1 only and copies every
frame it receives to all other connected VMs. Usage: hub.py ADDR PORT
"""
import selectors
import socket
import struct
import sys


def main():
    addr, port = sys.argv[1], int(sys.argv[2])
    if addr != "127.0.0.1":
        sys.exit("hub.py: the lab hub binds 127.0.0.1 only")
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((addr, port))
    srv.listen(16)
    sel = selectors.DefaultSelector()
    sel.register(srv, selectors.EVENT_READ)
    bufs = {}
    while True:
        for key, _events in sel.select():
            sock = key.fileobj
            if sock is srv:
                conn, _peer = srv.accept()
                sel.register(conn, selectors.EVENT_READ)
                bufs[conn] = b""
                continue
            data = sock.recv(65536)
            if not data:
                sel.unregister(sock)
                del bufs[sock]
                sock.close()
                continue
            bufs[sock] += data
            buf = bufs[sock]
            while len(buf) >= 4:
                (n,) = struct.unpack(">I", buf[:4])
                if len(buf) < 4 + n:
                    break
                frame, buf = buf[:4 + n], buf[4 + n:]
                for other in list(bufs):
                    if other is not sock:
                        try:
                            other.sendall(frame)
                        except OSError:
                            pass
            bufs[sock] = buf


if __name__ == "__main__":
    main()
