#!/usr/bin/python3
# An independent reference of the canonical backend ids (docs/operations.md "Backend
# identity"), written from the documented rule, not from user/core/backend_ids.c:
#   home(server) = fmix64(FNV-1a-64(family | address | port)) mod the id space
#   a server with an "id" (in any ring) has that id; the others, in order (family, address,
#   port, MAC, device), take their home or the next free id after it (wrapping).
#
#   backend_ids_ref.py home ADDR:PORT [MAX]      the home id (MAX: 65536)
#   backend_ids_ref.py ids CONFIG.json [MAX]     "ADDRESS:PORT ID" per server, by id
#   backend_ids_ref.py collide N [MAX]           N IPv4 addresses 10.66.x.y:53 with one home
import ipaddress
import json
import sys

M64 = (1 << 64) - 1


def fnv64(data, h=0xcbf29ce484222325):
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & M64
    return h


def fmix64(h):
    h ^= h >> 33
    h = (h * 0xff51afd7ed558ccd) & M64
    h ^= h >> 33
    h = (h * 0xc4ceb9fe1a85ec53) & M64
    return h ^ (h >> 33)


def split(addr):
    host, port = addr.rsplit(":", 1)
    ip = ipaddress.ip_address(host.strip("[]"))
    return ip, int(port)


def key(addr):
    ip, port = split(addr)
    return bytes([ip.version]) + ip.packed + port.to_bytes(2, "big")


def home(addr, space=65536):
    return fmix64(fnv64(key(addr))) % space


def order(server):
    addr, mac, dev = server
    ip, port = split(addr)
    packed = ip.packed + bytes(16 - len(ip.packed))
    return (ip.version, packed, port, bytes.fromhex(mac.replace(":", "")), dev)


def assign(servers, space=65536, pins=None):
    ids = dict(pins or {})
    taken = set(ids.values())
    for s in sorted(set(servers) - set(ids), key=order):
        i = home(s[0], space)
        while i in taken:
            i = (i + 1) % space
        taken.add(i)
        ids[s] = i
    return ids


def config_servers(path):
    cfg = json.load(open(path))
    servers, pins = [], {}
    for ring in cfg["rings"]:
        for b in ring["backends"]:
            s = (b["address"], b.get("mac", "00:00:00:00:00:00").lower(), b.get("dev", ""))
            servers.append(s)
            if "id" in b:
                pins[s] = b["id"]
    return servers, pins


def main():
    cmd, arg = sys.argv[1], sys.argv[2]
    space = int(sys.argv[3]) if len(sys.argv) > 3 else 65536
    if cmd == "home":
        print(home(arg, space))
    elif cmd == "ids":
        servers, pins = config_servers(arg)
        for (addr, mac, _), i in sorted(assign(servers, space, pins).items(),
                                         key=lambda e: e[1]):
            print(addr, i)
    elif cmd == "collide":
        seen = {}
        for n in range(1 << 16):
            a = "10.66.%d.%d:53" % (n >> 8, n & 255)
            seen.setdefault(home(a, space), []).append(a)
            if len(seen[home(a, space)]) == int(arg):
                print(" ".join(seen[home(a, space)]))
                return
        sys.exit("no collision found")


main()
