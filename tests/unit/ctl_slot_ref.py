#!/usr/bin/python3
"""Known answers of the migration's slot choice (include/kr_image_kern_user.h kr_mix32,
kr_ctl_slot), computed here from the definitions, not from keyrouter's code: mix32 is
MurmurHash3's 32-bit finaliser (fmix32); a key of hash h goes to the standby slot when
mix32(h) < fraction (units of 2^-32), else to the active slot.
Prints the two tables test_slot_known_answers() of tests/unit/ops_sm.c holds."""

M = 0xffffffff

def fmix32(h):
    h ^= h >> 16
    h = (h * 0x85ebca6b) & M
    h ^= h >> 13
    h = (h * 0xc2b2ae35) & M
    h ^= h >> 16
    return h

hashes = [0, 1, 2, 0x7fffffff, 0x80000000, 0xffffffff, 0xdeadbeef, 0x12345678, 0xf5eb180f,
          0x575b89a0]
fracs = [0, 1, 1 << 31, (1 << 32) - 1, 1 << 32, 0x3b851eb8]
print("/* hash, mix32(hash) */")
for h in hashes:
    print("\t{ 0x%08xu, 0x%08xu }," % (h, fmix32(h)))
print("/* hash, fraction, active, slot */")
i = 0
for h in hashes:
    for f in fracs:
        a = i & 1
        i += 1
        print("\t{ 0x%08xu, 0x%09xull, %d, %d }," % (h, f, a, a ^ (fmix32(h) < f)))
