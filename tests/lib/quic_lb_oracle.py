#!/usr/bin/python3
"""An independent QUIC-LB decoder (draft-ietf-quic-load-balancers) for the tests, written
from the draft's description with python3-cryptography's AES (none of keyrouter's code):
it checks the CIDs that the patched QUIC server issues.

  quic_lb_oracle.py selftest VECTORS          every vector line decodes and encodes exactly
  quic_lb_oracle.py decode SID_LEN NONCE_LEN KEY|- CID...
        one line per CID: "<cid> <config rotation> <server id> <nonce>"

VECTORS lines: config_rotation server_id_len nonce_len key|- server_id nonce cid
"""
import sys

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes


_ops = {}


def aes(key, block, decrypt=False):
    """One AES-128 block.  ECB keeps no state between blocks: one context per key and
    direction serves every call (the packet oracle decodes many CIDs)."""
    op = _ops.get((key, decrypt))
    if op is None:
        c = Cipher(algorithms.AES(key), modes.ECB())
        op = _ops[(key, decrypt)] = c.decryptor() if decrypt else c.encryptor()
    out = op.update(block)
    assert len(out) == 16
    return out


def halves(plen):
    return (plen + 1) // 2


def expand(half, plen, index):
    return bytes(half) + bytes(14 - len(half)) + bytes([plen, index])


def split(text):
    """left and right halves; an odd length shares the middle octet by nibbles."""
    plen, h = len(text), halves(len(text))
    left, right = bytearray(text[:h]), bytearray(text[plen - h:])
    if plen % 2:
        left[-1] &= 0xF0
        right[0] &= 0x0F
    return left, right


def join(left, right, plen):
    h = halves(plen)
    out = bytearray(plen)
    out[:h] = left
    for i, b in enumerate(right):
        out[plen - h + i] |= b
    return bytes(out)


def xor_round(key, src, dst, plen, index, dst_is_left):
    pad = aes(key, expand(src, plen, index))
    for i in range(len(dst)):
        dst[i] ^= pad[i]
    if plen % 2:
        if dst_is_left:
            dst[-1] &= 0xF0
        else:
            dst[0] &= 0x0F


def four_pass(key, text, encrypt):
    plen = len(text)
    left, right = split(text)
    order = (1, 2, 3, 4) if encrypt else (4, 3, 2, 1)
    for index in order:
        if index % 2:  # odd passes: the left half keys the right
            xor_round(key, left, right, plen, index, False)
        else:
            xor_round(key, right, left, plen, index, True)
    return join(left, right, plen)


def encode(cr, sid, nonce, key):
    plain = sid + nonce
    if key is None:
        body = plain
    elif len(plain) == 16:
        body = aes(key, plain)
    else:
        body = four_pass(key, plain, True)
    return bytes([(cr << 5) | len(plain)]) + body


def decode(cid, sid_len, nonce_len, key):
    """(config rotation, server id, nonce) of a CID."""
    plen = sid_len + nonce_len
    if len(cid) < 1 + plen:
        raise ValueError("CID of %d octets is shorter than 1 + %d" % (len(cid), plen))
    body = cid[1:1 + plen]
    if key is None:
        plain = body
    elif plen == 16:
        plain = aes(key, body, decrypt=True)
    else:
        plain = four_pass(key, body, False)
    return cid[0] >> 5, plain[:sid_len], plain[sid_len:]


def key_arg(s):
    return None if s == "-" else bytes.fromhex(s)


def selftest(path):
    n = bad = 0
    for line in open(path):
        if not line.strip() or line.startswith("#"):
            continue
        cr, sl, nl, key, sid, nonce, cid = line.split()
        key, sid, nonce, cid = key_arg(key), bytes.fromhex(sid), bytes.fromhex(nonce), bytes.fromhex(cid)
        n += 1
        _, dsid, dnonce = decode(cid, int(sl), int(nl), key)
        enc = encode(int(cr), sid, nonce, key)
        # the draft's own vectors carry a first octet of their own: compare after it
        if dsid != sid or dnonce != nonce or enc[1:] != cid[1:]:
            bad += 1
            print("mismatch: %s" % line.strip())
    print("vectors %d mismatches %d" % (n, bad))
    return 1 if bad or not n else 0


def main(argv):
    if len(argv) >= 3 and argv[1] == "selftest":
        return selftest(argv[2])
    if len(argv) >= 5 and argv[1] == "decode":
        sl, nl, key = int(argv[2]), int(argv[3]), key_arg(argv[4])
        for c in argv[5:]:
            cr, sid, nonce = decode(bytes.fromhex(c), sl, nl, key)
            print(c, cr, sid.hex(), nonce.hex())
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
