/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The UALink mailbox wire format: 64-byte messages between kernel drivers.
 */
#ifndef __AMDGPU_UALINK_MSG_H__
#define __AMDGPU_UALINK_MSG_H__

#include <linux/bits.h>
#include <linux/types.h>

/* Size of one message, and of one entry of a receive ring. */
#define AMDGPU_UALINK_MSG_SIZE		64
/* The protocol version this driver speaks. */
#define AMDGPU_UALINK_PROTO_VERSION	1
/* Size of arrays indexed by message type (types are 1 to 7). */
#define AMDGPU_UALINK_MSG_TYPES		8

/* The message answers the request with the same transaction number. */
#define AMDGPU_UALINK_MSG_F_RESPONSE	BIT(0)
/*
 * On the NPA_RELEASE that answers an NPA_REVOKE only: the importer still
 * has GPU work on the range, and its own NPA_RELEASE request follows once
 * that work is done (or after its bound)
 */
#define AMDGPU_UALINK_MSG_F_LATER	BIT(1)
/*
 * On a HELLO only: a keepalive probe on an established connection. It asks
 * "are you there, and is our connection still yours?" and changes nothing
 * when the answer is yes; a peer without that connection greets back.
 */
#define AMDGPU_UALINK_MSG_F_PROBE	BIT(2)

/**
 * enum amdgpu_ualink_msg_type - message types, as in the public amdgpu patches
 * @AMDGPU_UALINK_MSG_HELLO: start of the handshake, with our generation
 * @AMDGPU_UALINK_MSG_HELLO_ACK: answer to HELLO, with the peer's generation
 * @AMDGPU_UALINK_MSG_NPA_REQ: importer asks the exporter to map a handle
 * @AMDGPU_UALINK_MSG_NPA_RSP: exporter grants an NPA range for the handle
 * @AMDGPU_UALINK_MSG_NPA_FAIL: exporter refuses, with a reason
 * @AMDGPU_UALINK_MSG_NPA_REVOKE: exporter withdraws a granted range
 * @AMDGPU_UALINK_MSG_NPA_RELEASE: importer no longer uses a granted range
 */
enum amdgpu_ualink_msg_type {
	AMDGPU_UALINK_MSG_HELLO = 1,
	AMDGPU_UALINK_MSG_HELLO_ACK = 2,
	AMDGPU_UALINK_MSG_NPA_REQ = 3,
	AMDGPU_UALINK_MSG_NPA_RSP = 4,
	AMDGPU_UALINK_MSG_NPA_FAIL = 5,
	AMDGPU_UALINK_MSG_NPA_REVOKE = 6,
	AMDGPU_UALINK_MSG_NPA_RELEASE = 7,
};

/**
 * enum amdgpu_ualink_fail_reason - why an exporter answers NPA_FAIL
 * @AMDGPU_UALINK_FAIL_NO_SPACE: its NPA window has no room
 * @AMDGPU_UALINK_FAIL_INVALID_HANDLE: unknown handle, or requester not
 *	authorized (deliberately the same answer)
 * @AMDGPU_UALINK_FAIL_DUPLICATE: the requester holds this handle already
 * @AMDGPU_UALINK_FAIL_ERROR: any other failure
 */
enum amdgpu_ualink_fail_reason {
	AMDGPU_UALINK_FAIL_NO_SPACE = 1,
	AMDGPU_UALINK_FAIL_INVALID_HANDLE = 2,
	AMDGPU_UALINK_FAIL_DUPLICATE = 3,
	AMDGPU_UALINK_FAIL_ERROR = 4,
};

/**
 * enum amdgpu_ualink_drop - why an inbound message was dropped
 * @AMDGPU_UALINK_DROP_CRC: the CRC does not match (corrupted entry)
 * @AMDGPU_UALINK_DROP_VERSION: another protocol version
 * @AMDGPU_UALINK_DROP_TYPE: unknown message type
 * @AMDGPU_UALINK_DROP_RESERVED: a reserved bit, or a field the type does
 *	not use, is not zero
 * @AMDGPU_UALINK_DROP_SENDER: claims a sender other than the ring's owner
 * @AMDGPU_UALINK_DROP_RECEIVER: addressed to another accelerator
 * @AMDGPU_UALINK_DROP_HANDLE: the handle is zero or names the wrong exporter
 * @AMDGPU_UALINK_DROP_RANGE: the NPA range is not in the right window, or
 *	touches its ring reserve
 * @AMDGPU_UALINK_DROP_REASON: NPA_FAIL with an unknown reason
 * @AMDGPU_UALINK_DROP_FLAGS: an unknown flag, or the response flag on a
 *	request-only type or missing on a response-only type
 * @AMDGPU_UALINK_DROP_UNCONNECTED: a request from a peer we have no
 *	connection with (we answer with a HELLO)
 * @AMDGPU_UALINK_DROP_UNMATCHED: a response to no outstanding request of
 *	ours: duplicate, late or unsolicited
 * @AMDGPU_UALINK_DROP_MISMATCH: a response whose transaction matches a
 *	request but whose type or handle does not
 * @AMDGPU_UALINK_DROP_RING: an entry skipped because the sender published a
 *	producer index more than a ring ahead of what we consumed
 * @AMDGPU_UALINK_DROP_REASONS: number of reasons, for counter arrays
 */
enum amdgpu_ualink_drop {
	AMDGPU_UALINK_DROP_CRC,
	AMDGPU_UALINK_DROP_VERSION,
	AMDGPU_UALINK_DROP_TYPE,
	AMDGPU_UALINK_DROP_RESERVED,
	AMDGPU_UALINK_DROP_SENDER,
	AMDGPU_UALINK_DROP_RECEIVER,
	AMDGPU_UALINK_DROP_HANDLE,
	AMDGPU_UALINK_DROP_RANGE,
	AMDGPU_UALINK_DROP_REASON,
	AMDGPU_UALINK_DROP_FLAGS,
	AMDGPU_UALINK_DROP_UNCONNECTED,
	AMDGPU_UALINK_DROP_UNMATCHED,
	AMDGPU_UALINK_DROP_MISMATCH,
	AMDGPU_UALINK_DROP_RING,
	AMDGPU_UALINK_DROP_REASONS
};

/**
 * struct amdgpu_ualink_msg - a message as the driver handles it
 *
 * Fields a type does not use are zero.
 */
struct amdgpu_ualink_msg {
	/** @type: &enum amdgpu_ualink_msg_type */
	u16 type;
	/** @version: protocol version */
	u8 version;
	/**
	 * @flags: %AMDGPU_UALINK_MSG_F_RESPONSE, with
	 * %AMDGPU_UALINK_MSG_F_LATER on an NPA_RELEASE answer;
	 * %AMDGPU_UALINK_MSG_F_PROBE on a keepalive HELLO; or 0
	 */
	u8 flags;
	/** @sender: accelerator ID of the sender */
	u16 sender;
	/** @receiver: accelerator ID of the receiver */
	u16 receiver;
	/** @txn: transaction number; a response carries its request's */
	u32 txn;
	/** @reason: NPA_FAIL only: &enum amdgpu_ualink_fail_reason */
	u32 reason;
	/** @handle: the 128-bit handle, low word first (NPA_* types) */
	u64 handle[2];
	/** @npa: first address of the range (NPA_RSP, NPA_REVOKE, NPA_RELEASE) */
	u64 npa;
	/** @size: size of the range (NPA_RSP, NPA_REVOKE, NPA_RELEASE) */
	u64 size;
	/** @generation: the sender's generation (HELLO, HELLO_ACK) */
	u64 generation;
};

int amdgpu_ualink_msg_encode(const struct amdgpu_ualink_msg *msg,
			     void *buf);
int amdgpu_ualink_msg_decode(const void *buf, struct amdgpu_ualink_msg *msg,
			     enum amdgpu_ualink_drop *drop);
bool amdgpu_ualink_msg_is_response(const struct amdgpu_ualink_msg *msg);
const char *amdgpu_ualink_msg_type_name(unsigned int type);
const char *amdgpu_ualink_drop_name(enum amdgpu_ualink_drop drop);
u32 amdgpu_ualink_msg_wire_txn(const void *buf);
int amdgpu_ualink_msg_validate(const struct amdgpu_ualink_msg *msg,
			       u16 ring_owner, u16 self,
			       enum amdgpu_ualink_drop *drop);

#endif /* __AMDGPU_UALINK_MSG_H__ */
