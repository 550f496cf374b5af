// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <linux/align.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/math64.h>
#include <linux/overflow.h>

#include "amdgpu_ualink_npa.h"

/**
 * DOC: NPA layout
 *
 * A UALink pod shares one Network Physical Address (NPA) space. Each of its
 * up to 1,024 accelerators owns a window of it, named by the accelerator's
 * 10-bit ID, and exports its memory only into that window::
 *
 *	bit  63        51 50          41 40                              0
 *	    +------------+--------------+---------------------------------+
 *	    |  zero      |  owner ID    |  offset in the owner's window   |
 *	    +------------+--------------+---------------------------------+
 *
 * A window is 2 TiB. Its head is reserved for the receive rings other
 * accelerators write mailbox messages and TLB shootdown requests into: one
 * 4 KiB ring of each kind per possible sender, so the ring an entry lands in
 * names its sender. For 1,024 senders that is 8 MiB of address space; memory
 * backs a sender's rings only once that sender talks. Everything above the
 * reserve, up to the end of the window, is for exported memory.
 *
 * The parameters live in amdgpu_ualink_npa.h and nowhere else. The helpers
 * below are the only code that composes or decomposes an NPA; anything that
 * arrives from another node passes amdgpu_ualink_npa_check_range() or
 * amdgpu_ualink_npa_ring_owner() before it is used.
 */

static_assert(AMDGPU_UALINK_NPA_BITS == 51);
static_assert(AMDGPU_UALINK_NPA_RESERVE == SZ_8M);
static_assert(AMDGPU_UALINK_NPA_RESERVE < AMDGPU_UALINK_NPA_WINDOW_SIZE);

#define NPA_OFFSET_MASK	(AMDGPU_UALINK_NPA_WINDOW_SIZE - 1)

/**
 * amdgpu_ualink_npa_build - compose an NPA from an owner and an offset
 * @id: the owning accelerator's ID
 * @offset: the offset inside @id's window
 *
 * Returns: the NPA, or %AMDGPU_UALINK_NPA_INVALID when @id is not a valid
 * accelerator ID or @offset lies outside a window.
 */
u64 amdgpu_ualink_npa_build(u16 id, u64 offset)
{
	if (id >= AMDGPU_UALINK_MAX_ACCELS ||
	    offset >= AMDGPU_UALINK_NPA_WINDOW_SIZE)
		return AMDGPU_UALINK_NPA_INVALID;

	return ((u64)id << AMDGPU_UALINK_NPA_WINDOW_SHIFT) | offset;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_npa_build);

/**
 * amdgpu_ualink_npa_split - decompose an NPA into owner and offset
 * @npa: the address
 * @id: returns the owning accelerator's ID
 * @offset: returns the offset inside that accelerator's window
 *
 * Returns: 0, or -EINVAL when @npa has bits set above the NPA width (then
 * @id and @offset are left untouched).
 */
int amdgpu_ualink_npa_split(u64 npa, u16 *id, u64 *offset)
{
	if (npa >> AMDGPU_UALINK_NPA_BITS)
		return -EINVAL;

	*id = npa >> AMDGPU_UALINK_NPA_WINDOW_SHIFT;
	*offset = npa & NPA_OFFSET_MASK;
	return 0;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_npa_split);

/**
 * amdgpu_ualink_npa_check_range - check a range for memory exported by @id
 * @id: the accelerator that must own the range
 * @npa: the first address of the range
 * @size: the size of the range in bytes
 *
 * A range of exported memory is valid when it is not empty, both @npa and
 * @size are multiples of %AMDGPU_UALINK_NPA_PAGE_SIZE, and it lies wholly in
 * @id's window above the ring reserve.
 *
 * Returns: 0 when valid; -EINVAL when @id is not an accelerator ID, @size is
 * zero or larger than a window, or either value is misaligned or out of the
 * NPA width; -ERANGE when the range leaves @id's window or touches its
 * reserve.
 */
int amdgpu_ualink_npa_check_range(u16 id, u64 npa, u64 size)
{
	u64 base, last;

	if (id >= AMDGPU_UALINK_MAX_ACCELS || !size ||
	    !IS_ALIGNED(npa, AMDGPU_UALINK_NPA_PAGE_SIZE) ||
	    !IS_ALIGNED(size, AMDGPU_UALINK_NPA_PAGE_SIZE) ||
	    npa >> AMDGPU_UALINK_NPA_BITS ||
	    size > AMDGPU_UALINK_NPA_WINDOW_SIZE)
		return -EINVAL;

	/* Neither addition can wrap: both operands are below 2^52. */
	last = npa + size - 1;
	base = amdgpu_ualink_npa_build(id, 0);
	if (npa < base + AMDGPU_UALINK_NPA_RESERVE ||
	    last > base + NPA_OFFSET_MASK)
		return -ERANGE;

	return 0;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_npa_check_range);

/**
 * amdgpu_ualink_npa_ring - where @sender's ring of a kind sits at @receiver
 * @receiver: the accelerator that owns the ring
 * @sender: the accelerator that writes into it
 * @kind: message or shootdown ring
 *
 * Returns: the NPA of the first entry of the ring, or
 * %AMDGPU_UALINK_NPA_INVALID for an invalid ID or kind.
 */
u64 amdgpu_ualink_npa_ring(u16 receiver, u16 sender,
			   enum amdgpu_ualink_ring_kind kind)
{
	if (sender >= AMDGPU_UALINK_MAX_ACCELS ||
	    kind >= AMDGPU_UALINK_RING_KINDS)
		return AMDGPU_UALINK_NPA_INVALID;

	return amdgpu_ualink_npa_build(receiver,
				       kind * AMDGPU_UALINK_NPA_RING_AREA +
				       (u64)sender * AMDGPU_UALINK_RING_SIZE);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_npa_ring);

/**
 * amdgpu_ualink_npa_ring_owner - which sender's ring an address lies in
 * @receiver: the accelerator whose reserve @npa must lie in
 * @npa: any address inside a ring (an entry, not only the ring's start)
 * @sender: returns the sender the ring belongs to
 * @kind: returns the kind of the ring
 *
 * This is how a receiver names the sender of a message: by the ring it
 * arrived in, never by what the message claims.
 *
 * Returns: 0; -EINVAL when @npa has bits above the NPA width; -ERANGE when
 * it is not inside @receiver's ring reserve. On error @sender and @kind are
 * left untouched.
 */
int amdgpu_ualink_npa_ring_owner(u16 receiver, u64 npa, u16 *sender,
				 enum amdgpu_ualink_ring_kind *kind)
{
	u64 offset;
	u16 owner;
	u32 rem;

	if (amdgpu_ualink_npa_split(npa, &owner, &offset))
		return -EINVAL;
	if (owner != receiver || offset >= AMDGPU_UALINK_NPA_RESERVE)
		return -ERANGE;

	*kind = div_u64_rem(offset, AMDGPU_UALINK_NPA_RING_AREA, &rem);
	*sender = rem / AMDGPU_UALINK_RING_SIZE;
	return 0;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_npa_ring_owner);
