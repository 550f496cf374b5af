#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# The region fuzzer of `make pod-test`: writes random and adversarial
# values into a pod's shared region (the host file the guests map as
# their ivshmem device) while the guests run, as a guest that writes
# garbage would. What it writes:
#
#   - every ring of every pair: producer and consumer indices (random,
#     backwards, far ahead, all ones), the "waiting" flag, and slots
#     (random bytes, or a live message with bits flipped);
#   - the header's counters (boots, refused) of every accelerator, and
#     its access in flight (a random count and owner, or an odd count
#     naming a live accelerator as the owner: that owner's shootdowns of
#     it wait, bounded, until the requester's next access rewrites it);
#   - everything of the accelerators named dead (--dead): the root of
#     their page tables, their table pool (entries pointing anywhere in
#     the region, at their own table, past device memory) and their
#     access table;
#   - of live accelerators, only the sequence counts of the first slots
#     of their access tables, left odd ("being rewritten"): the owner's
#     next rewrite of such a slot must still end even.
#
# Not the tables, the ranges and bits of access tables, or the device
# memory of a live accelerator: those are its kernel's, as a GPU's page
# tables and VRAM are its own; a writer there is a rogue device, which no
# kernel can defend against.
#
#   region-fuzz.py REGION NUM_NODES VRAM_MB SECONDS SEED [--dead ID,...]
#
# Prints the seed and how many writes of each kind it made.
import mmap
import random
import struct
import sys
import time

MAGIC = 0x6b6c6175	# "ualk"
VERSION = 5
PAGE = 4096
RING_ENTRIES = 64
MSG_SIZE = 64
RING_SIZE = 12 + RING_ENTRIES * MSG_SIZE
RING_STRIDE = (RING_SIZE + 63) // 64 * 64
PT_PAGES = 256
ACL_PAGES = 4
MAX_NODES = 16
# header: magic, version, num_nodes, pt_pages, vpod_size, pad, vram_size,
# then per accelerator root (u64), boots (u32), refused (u32),
# access_seq (u32), access_owner (u32)
HDR_NODE = 32
HDR_NODE_SIZE = 24
ACL_SLOT = 8 + 16 + 1024 // 8


def main():
    args = sys.argv[1:]
    dead = []
    if '--dead' in args:
        i = args.index('--dead')
        dead = [int(x) for x in args[i + 1].split(',') if x]
        del args[i:i + 2]
    if len(args) != 5:
        sys.exit('usage: region-fuzz.py REGION NUM_NODES VRAM_MB SECONDS SEED [--dead ID,...]')
    path, n, vram_mb, seconds, seed = args[0], int(args[1]), int(args[2]), \
        float(args[3]), int(args[4], 0)
    vram = vram_mb << 20
    node_off = PAGE + (n * n * RING_STRIDE + PAGE - 1) // PAGE * PAGE
    node_stride = (PT_PAGES + ACL_PAGES) * PAGE + vram
    rnd = random.Random(seed)
    counts = {}

    with open(path, 'r+b') as f:
        m = mmap.mmap(f.fileno(), 0)
        # the layout this writes into: amdgpu_ualink_vpod_shm.c's
        magic, version, nodes, pt_pages = struct.unpack('<IIII', m[0:16])
        vram_size = struct.unpack('<Q', m[24:32])[0]
        if (magic, version, nodes, pt_pages, vram_size) != \
                (MAGIC, VERSION, n, PT_PAGES, vram):
            sys.exit('region-fuzz: %s is not a region of this layout: magic %#x version %d, '
                     '%d accelerators, %d table pages, %d bytes each' %
                     (path, magic, version, nodes, pt_pages, vram_size))

        def u32(off, v):
            m[off:off + 4] = struct.pack('<I', v & 0xffffffff)

        def u64(off, v):
            m[off:off + 8] = struct.pack('<Q', v & 0xffffffffffffffff)

        def get32(off):
            return struct.unpack('<I', m[off:off + 4])[0]

        def ring(rx, tx):
            return PAGE + (rx * n + tx) * RING_STRIDE

        def index_value(cur):
            return rnd.choice([rnd.getrandbits(32), cur - 1, cur - RING_ENTRIES,
                               cur + RING_ENTRIES + 1, cur + 0x40000000,
                               0xffffffff, 0, cur + 1])

        def fuzz_index():
            rx, tx = rnd.randrange(n), rnd.randrange(n)
            if rx == tx:
                return
            off = ring(rx, tx) + rnd.choice([0, 4])
            u32(off, index_value(get32(off)))
            counts['ring-index'] = counts.get('ring-index', 0) + 1

        def fuzz_waiting():
            rx, tx = rnd.randrange(n), rnd.randrange(n)
            if rx != tx:
                u32(ring(rx, tx) + 8, rnd.choice([0, 1, rnd.getrandbits(32)]))
                counts['ring-waiting'] = counts.get('ring-waiting', 0) + 1

        def fuzz_slot():
            rx, tx = rnd.randrange(n), rnd.randrange(n)
            if rx == tx:
                return
            off = ring(rx, tx) + 12 + rnd.randrange(RING_ENTRIES) * MSG_SIZE
            if rnd.random() < 0.5:
                m[off:off + MSG_SIZE] = rnd.randbytes(MSG_SIZE)
                counts['slot-random'] = counts.get('slot-random', 0) + 1
            else:
                b = bytearray(m[off:off + MSG_SIZE])
                for _ in range(rnd.randint(1, 4)):
                    b[rnd.randrange(MSG_SIZE)] ^= 1 << rnd.randrange(8)
                m[off:off + MSG_SIZE] = bytes(b)
                counts['slot-flip'] = counts.get('slot-flip', 0) + 1

        def fuzz_counter():
            node = rnd.randrange(n)
            u32(HDR_NODE + node * HDR_NODE_SIZE + rnd.choice([8, 12]),
                rnd.getrandbits(32))
            counts['header-counter'] = counts.get('header-counter', 0) + 1

        def fuzz_access():
            node = rnd.randrange(n)
            off = HDR_NODE + node * HDR_NODE_SIZE + 16
            if rnd.random() < 0.5:
                u32(off + 4, rnd.randrange(n))
                u32(off, rnd.getrandbits(32) | 1)
            else:
                u32(off + rnd.choice([0, 4]), rnd.getrandbits(32))
            counts['header-access'] = counts.get('header-access', 0) + 1

        def pt_value(node):
            pool = node_off + node * node_stride
            page = pool + rnd.randrange(PT_PAGES) * PAGE
            return rnd.choice([
                rnd.getrandbits(64),
                page | 7,                                # a table of the pool
                (pool + rnd.randrange(PT_PAGES * PAGE)) | 1,  # unaligned
                (rnd.randrange(len(m)) & ~(PAGE - 1)) | 7,  # anywhere
                (vram + rnd.getrandbits(20) * PAGE) | 7,     # past memory
                0xfffffffffffff007])

        def fuzz_dead():
            node = rnd.choice(dead)
            pool = node_off + node * node_stride
            kind = rnd.randrange(3)
            if kind == 0:
                u64(HDR_NODE + node * HDR_NODE_SIZE, rnd.choice([
                    pool + rnd.randrange(PT_PAGES) * PAGE,
                    pool + rnd.randrange(PT_PAGES * PAGE),
                    rnd.getrandbits(64), len(m) - PAGE, 0]))
                counts['dead-root'] = counts.get('dead-root', 0) + 1
            elif kind == 1:
                off = pool + rnd.randrange(PT_PAGES * PAGE // 8) * 8
                u64(off, pt_value(node))
                counts['dead-table'] = counts.get('dead-table', 0) + 1
            else:
                acl = pool + PT_PAGES * PAGE
                slot = acl + rnd.randrange(ACL_PAGES * PAGE // ACL_SLOT) * ACL_SLOT
                off = slot + rnd.randrange(ACL_SLOT // 8) * 8
                u64(off, rnd.choice([rnd.getrandbits(64), 0xffffffffffffffff, 0, 1]))
                counts['dead-access-table'] = counts.get('dead-access-table', 0) + 1

        live = [i for i in range(n) if i not in dead]

        def fuzz_live_seq():
            node = rnd.choice(live)
            acl = node_off + node * node_stride + PT_PAGES * PAGE
            u32(acl + rnd.randrange(4) * ACL_SLOT, rnd.getrandbits(32) | 1)
            counts['live-access-seq'] = counts.get('live-access-seq', 0) + 1

        kinds = [fuzz_index, fuzz_waiting, fuzz_slot, fuzz_slot, fuzz_counter,
                 fuzz_access]
        if live:
            kinds += [fuzz_live_seq]
        if dead:
            kinds += [fuzz_dead] * 3
        end = time.monotonic() + seconds
        writes = 0
        while time.monotonic() < end:
            rnd.choice(kinds)()
            writes += 1
            if writes % 64 == 0:
                time.sleep(0.01)	# about 6,000 writes a second
        m.flush()
        m.close()
    print('region-fuzz: seed %#x, %.0f s, %d writes: %s' % (
        seed, seconds, writes,
        ', '.join('%s %d' % kv for kv in sorted(counts.items()))))


if __name__ == '__main__':
    main()
