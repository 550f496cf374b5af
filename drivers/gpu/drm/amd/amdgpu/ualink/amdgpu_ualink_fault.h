/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Fault injection for the mailbox transport: which outgoing messages to
 * drop, delay, duplicate, reorder or corrupt.
 */
#ifndef __AMDGPU_UALINK_FAULT_H__
#define __AMDGPU_UALINK_FAULT_H__

#include <linux/prandom.h>
#include <linux/spinlock.h>
#include <linux/types.h>

/* Rates are given in parts per million. */
#define AMDGPU_UALINK_FAULT_RATE_ONE	1000000

/**
 * enum amdgpu_ualink_fault_kind - what can happen to an outgoing message
 * @AMDGPU_UALINK_FAULT_DROP: it is never written into the ring
 * @AMDGPU_UALINK_FAULT_CORRUPT: one bit of it is flipped on the way
 * @AMDGPU_UALINK_FAULT_DUPLICATE: it is written into the ring twice
 * @AMDGPU_UALINK_FAULT_DELAY: it is held back for the rule's delay
 * @AMDGPU_UALINK_FAULT_REORDER: it is held back until the next message to
 *	the same peer has been written (or the rule's delay has passed)
 * @AMDGPU_UALINK_FAULT_KINDS: number of kinds
 * @AMDGPU_UALINK_FAULT_NONE: no fault, returned by
 *	amdgpu_ualink_fault_decide()
 */
enum amdgpu_ualink_fault_kind {
	AMDGPU_UALINK_FAULT_DROP,
	AMDGPU_UALINK_FAULT_CORRUPT,
	AMDGPU_UALINK_FAULT_DUPLICATE,
	AMDGPU_UALINK_FAULT_DELAY,
	AMDGPU_UALINK_FAULT_REORDER,
	AMDGPU_UALINK_FAULT_KINDS,
	AMDGPU_UALINK_FAULT_NONE = AMDGPU_UALINK_FAULT_KINDS,
};

/**
 * struct amdgpu_ualink_fault_rule - when to inject one kind of fault
 *
 * A rule with @count set faults the next @count matching messages and is
 * then spent; otherwise it faults each matching message with probability
 * @rate per million. A rule with neither is off.
 */
struct amdgpu_ualink_fault_rule {
	/** @types: mask of BIT(message type); 0 matches every type */
	u32 types;
	/** @rate: probability per million, 0 to 1000000 */
	u32 rate;
	/** @count: fault this many matching messages, then stop */
	u32 count;
	/** @delay_ms: DELAY: how long; REORDER: the longest hold */
	u32 delay_ms;
};

/**
 * struct amdgpu_ualink_fault - the fault rules of one node
 */
struct amdgpu_ualink_fault {
	/** @lock: protects everything below; taken in process context */
	spinlock_t lock;
	/** @rules: one per &enum amdgpu_ualink_fault_kind */
	struct amdgpu_ualink_fault_rule rules[AMDGPU_UALINK_FAULT_KINDS];
	/** @rnd: pseudo-random state, seeded for reproducible runs */
	struct rnd_state rnd;
	/** @injected: faults injected so far, per kind */
	u64 injected[AMDGPU_UALINK_FAULT_KINDS];
};

void amdgpu_ualink_fault_init(struct amdgpu_ualink_fault *fault, u64 seed);
int amdgpu_ualink_fault_set(struct amdgpu_ualink_fault *fault,
			    enum amdgpu_ualink_fault_kind kind,
			    const struct amdgpu_ualink_fault_rule *rule);
void amdgpu_ualink_fault_get(struct amdgpu_ualink_fault *fault,
			     enum amdgpu_ualink_fault_kind kind,
			     struct amdgpu_ualink_fault_rule *rule);
void amdgpu_ualink_fault_clear(struct amdgpu_ualink_fault *fault);
enum amdgpu_ualink_fault_kind
amdgpu_ualink_fault_decide(struct amdgpu_ualink_fault *fault, u16 type,
			   u32 *delay_ms);
void amdgpu_ualink_fault_corrupt(struct amdgpu_ualink_fault *fault,
				 u8 *entry, size_t size);
const char *amdgpu_ualink_fault_name(enum amdgpu_ualink_fault_kind kind);

#endif /* __AMDGPU_UALINK_FAULT_H__ */
