// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <linux/bits.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/string.h>

#include "amdgpu_ualink_fault.h"
#include "amdgpu_ualink_msg.h"

/**
 * DOC: Fault injection
 *
 * The mailbox must survive a lossy, duplicating, reordering and corrupting
 * transport. Each node has one rule per &enum amdgpu_ualink_fault_kind; the
 * node's transmit path asks amdgpu_ualink_fault_decide() about every message
 * it is about to write into a peer's ring and carries out the answer. The
 * rules are checked in the order of the enum and the first that fires wins,
 * so a message suffers at most one fault. A rule fires by count (the next N
 * matching messages) or by rate (parts per million), optionally only for
 * some message types; the pseudo-random state is seeded so that a KUnit run
 * is reproducible. KUnit sets rules directly; the emulated pod exposes them
 * in debugfs.
 */

/**
 * amdgpu_ualink_fault_init - start with every rule off
 * @fault: the rules to initialise
 * @seed: seed of the pseudo-random state
 */
void amdgpu_ualink_fault_init(struct amdgpu_ualink_fault *fault, u64 seed)
{
	memset(fault, 0, sizeof(*fault));
	spin_lock_init(&fault->lock);
	prandom_seed_state(&fault->rnd, seed);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_fault_init);

/**
 * amdgpu_ualink_fault_set - replace one rule
 * @fault: the node's rules
 * @kind: which rule
 * @rule: the new rule; all zero turns it off
 *
 * Returns: 0, or -EINVAL for an unknown kind, a rate above one million, or
 * a type mask naming no known message type.
 */
int amdgpu_ualink_fault_set(struct amdgpu_ualink_fault *fault,
			    enum amdgpu_ualink_fault_kind kind,
			    const struct amdgpu_ualink_fault_rule *rule)
{
	const u32 known = GENMASK(AMDGPU_UALINK_MSG_TYPES - 1,
				  AMDGPU_UALINK_MSG_HELLO);

	if ((unsigned int)kind >= AMDGPU_UALINK_FAULT_KINDS ||
	    rule->rate > AMDGPU_UALINK_FAULT_RATE_ONE ||
	    (rule->types & ~known))
		return -EINVAL;

	spin_lock(&fault->lock);
	fault->rules[kind] = *rule;
	spin_unlock(&fault->lock);
	return 0;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_fault_set);

/**
 * amdgpu_ualink_fault_get - read one rule
 * @fault: the node's rules
 * @kind: which rule, below %AMDGPU_UALINK_FAULT_KINDS
 * @rule: where to copy it (with the count still to go)
 */
void amdgpu_ualink_fault_get(struct amdgpu_ualink_fault *fault,
			     enum amdgpu_ualink_fault_kind kind,
			     struct amdgpu_ualink_fault_rule *rule)
{
	spin_lock(&fault->lock);
	*rule = fault->rules[kind];
	spin_unlock(&fault->lock);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_fault_get);

/**
 * amdgpu_ualink_fault_clear - turn every rule off
 * @fault: the node's rules
 *
 * The counts of injected faults are kept.
 */
void amdgpu_ualink_fault_clear(struct amdgpu_ualink_fault *fault)
{
	spin_lock(&fault->lock);
	memset(fault->rules, 0, sizeof(fault->rules));
	spin_unlock(&fault->lock);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_fault_clear);

static bool rule_fires(struct amdgpu_ualink_fault *fault,
		       struct amdgpu_ualink_fault_rule *rule, u16 type)
{
	lockdep_assert_held(&fault->lock);

	if (rule->types && !(rule->types & BIT(type)))
		return false;
	if (rule->count) {
		rule->count--;
		return true;
	}
	return rule->rate &&
	       prandom_u32_state(&fault->rnd) % AMDGPU_UALINK_FAULT_RATE_ONE <
	       rule->rate;
}

/**
 * amdgpu_ualink_fault_decide - what to do with a message about to be sent
 * @fault: the sending node's rules
 * @type: the message's type
 * @delay_ms: set to the rule's delay for DELAY and REORDER
 *
 * Context: process context; takes a spinlock.
 * Returns: the fault to inject, or %AMDGPU_UALINK_FAULT_NONE.
 */
enum amdgpu_ualink_fault_kind
amdgpu_ualink_fault_decide(struct amdgpu_ualink_fault *fault, u16 type,
			   u32 *delay_ms)
{
	enum amdgpu_ualink_fault_kind kind;

	spin_lock(&fault->lock);
	for (kind = 0; kind < AMDGPU_UALINK_FAULT_KINDS; kind++) {
		if (rule_fires(fault, &fault->rules[kind], type)) {
			fault->injected[kind]++;
			*delay_ms = fault->rules[kind].delay_ms;
			break;
		}
	}
	spin_unlock(&fault->lock);
	return kind;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_fault_decide);

/**
 * amdgpu_ualink_fault_corrupt - flip one pseudo-random bit
 * @fault: the sending node's rules (for the random state)
 * @entry: the encoded message
 * @size: its size in bytes, not zero
 */
void amdgpu_ualink_fault_corrupt(struct amdgpu_ualink_fault *fault,
				 u8 *entry, size_t size)
{
	u32 bit;

	spin_lock(&fault->lock);
	bit = prandom_u32_state(&fault->rnd) % (size * BITS_PER_BYTE);
	spin_unlock(&fault->lock);
	entry[bit / BITS_PER_BYTE] ^= BIT(bit % BITS_PER_BYTE);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_fault_corrupt);

static const char *const fault_names[AMDGPU_UALINK_FAULT_KINDS] = {
	[AMDGPU_UALINK_FAULT_DROP] = "drop",
	[AMDGPU_UALINK_FAULT_CORRUPT] = "corrupt",
	[AMDGPU_UALINK_FAULT_DUPLICATE] = "duplicate",
	[AMDGPU_UALINK_FAULT_DELAY] = "delay",
	[AMDGPU_UALINK_FAULT_REORDER] = "reorder",
};

/**
 * amdgpu_ualink_fault_name - name of a fault kind, for debugfs
 * @kind: the kind
 *
 * Returns: a lower-case name, or "none".
 */
const char *amdgpu_ualink_fault_name(enum amdgpu_ualink_fault_kind kind)
{
	return (unsigned int)kind < AMDGPU_UALINK_FAULT_KINDS ?
	       fault_names[kind] : "none";
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_fault_name);
