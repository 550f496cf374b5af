/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * UALink Network Physical Address (NPA) layout: the parameters of the pod's
 * address space, in one place, and the helpers that build, split and check
 * NPAs. See amdgpu_ualink_npa.c for the description.
 */
#ifndef __AMDGPU_UALINK_NPA_H__
#define __AMDGPU_UALINK_NPA_H__

#include <linux/bits.h>
#include <linux/limits.h>
#include <linux/sizes.h>
#include <linux/types.h>

/* width of an accelerator ID (UALink 1.0) */
#define AMDGPU_UALINK_ACCEL_ID_BITS	10
/* accelerators in one pod, IDs 0 to 1023 */
#define AMDGPU_UALINK_MAX_ACCELS	BIT(AMDGPU_UALINK_ACCEL_ID_BITS)

/* log2 of one accelerator's window */
#define AMDGPU_UALINK_NPA_WINDOW_SHIFT	41
/* one accelerator's window, 2 TiB */
#define AMDGPU_UALINK_NPA_WINDOW_SIZE	BIT_ULL(AMDGPU_UALINK_NPA_WINDOW_SHIFT)
/* significant NPA bits; the owner ID is 50..41 */
#define AMDGPU_UALINK_NPA_BITS \
	(AMDGPU_UALINK_NPA_WINDOW_SHIFT + AMDGPU_UALINK_ACCEL_ID_BITS)

/* granule of every mapped NPA range */
#define AMDGPU_UALINK_NPA_PAGE_SIZE	SZ_4K

/* one receive ring, 64 entries of 64 bytes */
#define AMDGPU_UALINK_RING_SIZE		SZ_4K
/* the rings of one kind for every sender */
#define AMDGPU_UALINK_NPA_RING_AREA \
	((u64)AMDGPU_UALINK_MAX_ACCELS * AMDGPU_UALINK_RING_SIZE)
/*
 * Head of each window kept for the rings:
 * message rings, then shootdown rings, one of each per possible sender
 * (8 MiB for 1,024 senders).
 */
#define AMDGPU_UALINK_NPA_RESERVE \
	(AMDGPU_UALINK_RING_KINDS * AMDGPU_UALINK_NPA_RING_AREA)

/* what amdgpu_ualink_npa_build() fails with */
#define AMDGPU_UALINK_NPA_INVALID	U64_MAX

/**
 * enum amdgpu_ualink_ring_kind - the rings each sender has at a receiver
 * @AMDGPU_UALINK_RING_MESSAGE: mailbox messages
 * @AMDGPU_UALINK_RING_SHOOTDOWN: remote TLB shootdown requests
 * @AMDGPU_UALINK_RING_KINDS: number of kinds
 */
enum amdgpu_ualink_ring_kind {
	AMDGPU_UALINK_RING_MESSAGE,
	AMDGPU_UALINK_RING_SHOOTDOWN,
	AMDGPU_UALINK_RING_KINDS
};

u64 amdgpu_ualink_npa_build(u16 id, u64 offset);
int amdgpu_ualink_npa_split(u64 npa, u16 *id, u64 *offset);
int amdgpu_ualink_npa_check_range(u16 id, u64 npa, u64 size);
u64 amdgpu_ualink_npa_ring(u16 receiver, u16 sender,
			   enum amdgpu_ualink_ring_kind kind);
int amdgpu_ualink_npa_ring_owner(u16 receiver, u64 npa, u16 *sender,
				 enum amdgpu_ualink_ring_kind *kind);

#endif /* __AMDGPU_UALINK_NPA_H__ */
