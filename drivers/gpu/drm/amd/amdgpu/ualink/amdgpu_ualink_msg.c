// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <linux/bitfield.h>
#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/crc32.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/kernel.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/unaligned.h>

#include "amdgpu_ualink_msg.h"
#include "amdgpu_ualink_npa.h"

/**
 * DOC: Mailbox messages
 *
 * Kernel drivers of a pod talk through 64-byte messages written into
 * receive rings in each other's NPA windows. Everything in a message from
 * another node is untrusted: it is decoded and checked here before any
 * other code looks at it, and this file is the only place that knows the
 * layout. All fields are little-endian::
 *
 *	offset  size  field
 *	     0     4  bits 9..0 type, bits 23..16 protocol version,
 *	              bits 31..24 flags (bit 24: response, bit 25:
 *	              release later, bit 26: keepalive probe)
 *	     4     4  bits 9..0 sender ID, bits 25..16 receiver ID
 *	     8     4  transaction number
 *	    12     4  NPA_FAIL reason
 *	    16    16  128-bit handle, low 64 bits first
 *	    32     8  NPA of the range
 *	    40     8  size of the range
 *	    48     8  sender's generation
 *	    56     4  reserved
 *	    60     4  CRC-32 (IEEE 802.3) of bytes 0 to 59
 *
 * Bits and fields not listed, and fields a type does not use, are zero. The
 * message types and NPA_FAIL reasons are those of the public amdgpu UALink
 * patches; the rest of the layout is this driver's.
 *
 * Every message is a request or the response to one, paired by the
 * transaction number the requester chose. HELLO and NPA_REQ are always
 * requests; HELLO_ACK, NPA_RSP and NPA_FAIL always responses and carry the
 * response flag. NPA_REVOKE and NPA_RELEASE are both: an exporter's
 * NPA_REVOKE is answered by the importer's NPA_RELEASE of the range and an
 * importer's NPA_RELEASE by the exporter's NPA_REVOKE, each with the
 * response flag, so that neither is lost silently. The flag tells a new
 * request from an answer even when the two sides' transaction numbers
 * happen to be equal. An importer whose GPU work still uses the range
 * answers NPA_REVOKE at once all the same, with the "release later" flag,
 * and sends its own NPA_RELEASE request once that work is done: its
 * mailbox never waits for the GPU.
 *
 * amdgpu_ualink_msg_decode() checks what a message says on its own (CRC,
 * version, type, reserved bits, unused fields, reason);
 * amdgpu_ualink_msg_validate() checks it against where it arrived (sender
 * is the ring's owner, receiver is us, the handle names the right exporter,
 * the range lies in the right window). Each failure names one
 * &enum amdgpu_ualink_drop reason, for per-reason counters.
 */

struct amdgpu_ualink_wire {
	__le32 type;
	__le32 ids;
	__le32 txn;
	__le32 reason;
	__le64 handle[2];
	__le64 npa;
	__le64 size;
	__le64 generation;
	__le32 reserved;
	__le32 crc;
};

static_assert(sizeof(struct amdgpu_ualink_wire) == AMDGPU_UALINK_MSG_SIZE);
static_assert(offsetof(struct amdgpu_ualink_wire, handle) == 16);
static_assert(offsetof(struct amdgpu_ualink_wire, generation) == 48);
static_assert(offsetof(struct amdgpu_ualink_wire, crc) == 60);

#define WIRE_TYPE	GENMASK(9, 0)
#define WIRE_VERSION	GENMASK(23, 16)
#define WIRE_FLAGS	GENMASK(31, 24)
#define WIRE_SENDER	GENMASK(9, 0)
#define WIRE_RECEIVER	GENMASK(25, 16)
#define WIRE_CRC_LEN	offsetof(struct amdgpu_ualink_wire, crc)

/* The fields each type uses besides type, version, IDs and txn. */
#define USES_HANDLE	BIT(0)
#define USES_RANGE	BIT(1)
#define USES_REASON	BIT(2)
#define USES_GEN	BIT(3)
#define IS_REQUEST	BIT(4)	/* never carries the response flag */
#define IS_RESPONSE	BIT(5)	/* always carries it */

static const u8 msg_fields[] = {
	[AMDGPU_UALINK_MSG_HELLO] = USES_GEN | IS_REQUEST,
	[AMDGPU_UALINK_MSG_HELLO_ACK] = USES_GEN | IS_RESPONSE,
	[AMDGPU_UALINK_MSG_NPA_REQ] = USES_HANDLE | IS_REQUEST,
	[AMDGPU_UALINK_MSG_NPA_RSP] = USES_HANDLE | USES_RANGE | IS_RESPONSE,
	[AMDGPU_UALINK_MSG_NPA_FAIL] = USES_HANDLE | USES_REASON | IS_RESPONSE,
	[AMDGPU_UALINK_MSG_NPA_REVOKE] = USES_HANDLE | USES_RANGE,
	[AMDGPU_UALINK_MSG_NPA_RELEASE] = USES_HANDLE | USES_RANGE,
};

/* The fields of @type, or 0 for an unknown type (every known one uses some). */
static u8 msg_uses(unsigned int type)
{
	return type < ARRAY_SIZE(msg_fields) ? msg_fields[type] : 0;
}

/* Does @msg carry something in a field its type does not use? */
static bool msg_unused_set(const struct amdgpu_ualink_msg *msg, u8 uses)
{
	return (!(uses & USES_HANDLE) && (msg->handle[0] || msg->handle[1])) ||
	       (!(uses & USES_RANGE) && (msg->npa || msg->size)) ||
	       (!(uses & USES_REASON) && msg->reason) ||
	       (!(uses & USES_GEN) && msg->generation);
}

/* Are the flags of @msg known and right for its type? */
static bool msg_flags_ok(const struct amdgpu_ualink_msg *msg, u8 uses)
{
	bool response = msg->flags & AMDGPU_UALINK_MSG_F_RESPONSE;
	u8 known = AMDGPU_UALINK_MSG_F_RESPONSE;

	/* "release later" answers an NPA_REVOKE, with an NPA_RELEASE */
	if (response && msg->type == AMDGPU_UALINK_MSG_NPA_RELEASE)
		known |= AMDGPU_UALINK_MSG_F_LATER;
	/* a keepalive is a HELLO that asks for nothing new */
	if (!response && msg->type == AMDGPU_UALINK_MSG_HELLO)
		known |= AMDGPU_UALINK_MSG_F_PROBE;
	return !(msg->flags & ~known) &&
	       !(response && (uses & IS_REQUEST)) &&
	       !(!response && (uses & IS_RESPONSE));
}

static bool msg_reason_ok(u32 reason)
{
	return reason >= AMDGPU_UALINK_FAIL_NO_SPACE &&
	       reason <= AMDGPU_UALINK_FAIL_ERROR;
}

static u32 msg_crc(const struct amdgpu_ualink_wire *w)
{
	return ~crc32_le(~0U, (const u8 *)w, WIRE_CRC_LEN);
}

/**
 * amdgpu_ualink_msg_encode - lay a message out for the wire
 * @msg: the message; fields its type does not use must be zero
 * @buf: %AMDGPU_UALINK_MSG_SIZE bytes to write, any alignment
 *
 * Returns: 0; -EINVAL when the type is unknown, the flags do not fit it, an
 * NPA_FAIL reason is unknown, an ID is not an accelerator ID, or a field the
 * type does not use is set (then @buf is not written).
 */
int amdgpu_ualink_msg_encode(const struct amdgpu_ualink_msg *msg, void *buf)
{
	u8 uses = msg_uses(msg->type);
	struct amdgpu_ualink_wire w = {};

	if (!uses || !msg_flags_ok(msg, uses) ||
	    ((uses & USES_REASON) && !msg_reason_ok(msg->reason)) ||
	    msg->sender >= AMDGPU_UALINK_MAX_ACCELS ||
	    msg->receiver >= AMDGPU_UALINK_MAX_ACCELS ||
	    msg_unused_set(msg, uses))
		return -EINVAL;

	w.type = cpu_to_le32(FIELD_PREP(WIRE_TYPE, msg->type) |
			     FIELD_PREP(WIRE_VERSION, msg->version) |
			     FIELD_PREP(WIRE_FLAGS, msg->flags));
	w.ids = cpu_to_le32(FIELD_PREP(WIRE_SENDER, msg->sender) |
			    FIELD_PREP(WIRE_RECEIVER, msg->receiver));
	w.txn = cpu_to_le32(msg->txn);
	w.reason = cpu_to_le32(msg->reason);
	w.handle[0] = cpu_to_le64(msg->handle[0]);
	w.handle[1] = cpu_to_le64(msg->handle[1]);
	w.npa = cpu_to_le64(msg->npa);
	w.size = cpu_to_le64(msg->size);
	w.generation = cpu_to_le64(msg->generation);
	w.crc = cpu_to_le32(msg_crc(&w));
	memcpy(buf, &w, sizeof(w));
	return 0;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_msg_encode);

static int msg_drop(enum amdgpu_ualink_drop *drop, enum amdgpu_ualink_drop why)
{
	*drop = why;
	return -EBADMSG;
}

/**
 * amdgpu_ualink_msg_decode - read and check a message from the wire
 * @buf: %AMDGPU_UALINK_MSG_SIZE bytes, any alignment; read once, so a peer
 *	 that rewrites the entry meanwhile cannot change what was checked
 * @msg: the decoded message, valid when 0 is returned
 * @drop: why the message was dropped, set when -EBADMSG is returned
 *
 * Returns: 0, or -EBADMSG when the CRC, version, type, a reserved bit, a
 * field the type does not use, the flags or an NPA_FAIL reason is wrong.
 */
int amdgpu_ualink_msg_decode(const void *buf, struct amdgpu_ualink_msg *msg,
			     enum amdgpu_ualink_drop *drop)
{
	struct amdgpu_ualink_wire w;
	u32 type, ids;
	u8 uses;

	memcpy(&w, buf, sizeof(w));
	if (le32_to_cpu(w.crc) != msg_crc(&w))
		return msg_drop(drop, AMDGPU_UALINK_DROP_CRC);

	type = le32_to_cpu(w.type);
	ids = le32_to_cpu(w.ids);
	if (FIELD_GET(WIRE_VERSION, type) != AMDGPU_UALINK_PROTO_VERSION)
		return msg_drop(drop, AMDGPU_UALINK_DROP_VERSION);
	uses = msg_uses(FIELD_GET(WIRE_TYPE, type));
	if (!uses)
		return msg_drop(drop, AMDGPU_UALINK_DROP_TYPE);
	if (type & ~(WIRE_TYPE | WIRE_VERSION | WIRE_FLAGS) ||
	    ids & ~(WIRE_SENDER | WIRE_RECEIVER) || w.reserved)
		return msg_drop(drop, AMDGPU_UALINK_DROP_RESERVED);

	*msg = (struct amdgpu_ualink_msg) {
		.type = FIELD_GET(WIRE_TYPE, type),
		.version = FIELD_GET(WIRE_VERSION, type),
		.flags = FIELD_GET(WIRE_FLAGS, type),
		.sender = FIELD_GET(WIRE_SENDER, ids),
		.receiver = FIELD_GET(WIRE_RECEIVER, ids),
		.txn = le32_to_cpu(w.txn),
		.reason = le32_to_cpu(w.reason),
		.handle = { le64_to_cpu(w.handle[0]), le64_to_cpu(w.handle[1]) },
		.npa = le64_to_cpu(w.npa),
		.size = le64_to_cpu(w.size),
		.generation = le64_to_cpu(w.generation),
	};
	if (msg_unused_set(msg, uses))
		return msg_drop(drop, AMDGPU_UALINK_DROP_RESERVED);
	if (!msg_flags_ok(msg, uses))
		return msg_drop(drop, AMDGPU_UALINK_DROP_FLAGS);
	if ((uses & USES_REASON) && !msg_reason_ok(msg->reason))
		return msg_drop(drop, AMDGPU_UALINK_DROP_REASON);
	return 0;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_msg_decode);

/**
 * amdgpu_ualink_msg_validate - check a decoded message against its ring
 * @msg: a message amdgpu_ualink_msg_decode() accepted
 * @ring_owner: the sender whose ring it arrived in
 * @self: our accelerator ID
 * @drop: why the message was dropped, set when -EBADMSG is returned
 *
 * The ring names the sender, never the message. A handle's low 10 bits name
 * its exporter: us for NPA_REQ and NPA_RELEASE, the sender for the others.
 * A range granted or revoked by the sender lies in the sender's window; one
 * released to us lies in ours; neither touches a ring reserve.
 *
 * Returns: 0, or -EBADMSG.
 */
int amdgpu_ualink_msg_validate(const struct amdgpu_ualink_msg *msg,
			       u16 ring_owner, u16 self,
			       enum amdgpu_ualink_drop *drop)
{
	u8 uses = msg_uses(msg->type);
	u16 exporter;

	if (msg->sender != ring_owner)
		return msg_drop(drop, AMDGPU_UALINK_DROP_SENDER);
	if (msg->receiver != self)
		return msg_drop(drop, AMDGPU_UALINK_DROP_RECEIVER);
	if (!(uses & USES_HANDLE))
		return 0;

	exporter = msg->type == AMDGPU_UALINK_MSG_NPA_REQ ||
		   msg->type == AMDGPU_UALINK_MSG_NPA_RELEASE ? self : msg->sender;
	if ((!msg->handle[0] && !msg->handle[1]) ||
	    (msg->handle[0] & (AMDGPU_UALINK_MAX_ACCELS - 1)) != exporter)
		return msg_drop(drop, AMDGPU_UALINK_DROP_HANDLE);
	if ((uses & USES_RANGE) &&
	    amdgpu_ualink_npa_check_range(exporter, msg->npa, msg->size))
		return msg_drop(drop, AMDGPU_UALINK_DROP_RANGE);
	return 0;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_msg_validate);

/**
 * amdgpu_ualink_msg_is_response - does a message answer a request?
 * @msg: a message amdgpu_ualink_msg_decode() accepted or one to encode
 *
 * Returns: true when @msg carries %AMDGPU_UALINK_MSG_F_RESPONSE.
 */
bool amdgpu_ualink_msg_is_response(const struct amdgpu_ualink_msg *msg)
{
	return msg->flags & AMDGPU_UALINK_MSG_F_RESPONSE;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_msg_is_response);

static const char *const msg_type_names[AMDGPU_UALINK_MSG_TYPES] = {
	[AMDGPU_UALINK_MSG_HELLO] = "hello",
	[AMDGPU_UALINK_MSG_HELLO_ACK] = "hello_ack",
	[AMDGPU_UALINK_MSG_NPA_REQ] = "npa_req",
	[AMDGPU_UALINK_MSG_NPA_RSP] = "npa_rsp",
	[AMDGPU_UALINK_MSG_NPA_FAIL] = "npa_fail",
	[AMDGPU_UALINK_MSG_NPA_REVOKE] = "npa_revoke",
	[AMDGPU_UALINK_MSG_NPA_RELEASE] = "npa_release",
};

/**
 * amdgpu_ualink_msg_type_name - name of a message type, for counters
 * @type: &enum amdgpu_ualink_msg_type
 *
 * Returns: a lower-case name, or "unknown".
 */
const char *amdgpu_ualink_msg_type_name(unsigned int type)
{
	return type < ARRAY_SIZE(msg_type_names) && msg_type_names[type] ?
	       msg_type_names[type] : "unknown";
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_msg_type_name);

static const char *const drop_names[AMDGPU_UALINK_DROP_REASONS] = {
	[AMDGPU_UALINK_DROP_CRC] = "crc",
	[AMDGPU_UALINK_DROP_VERSION] = "version",
	[AMDGPU_UALINK_DROP_TYPE] = "type",
	[AMDGPU_UALINK_DROP_RESERVED] = "reserved",
	[AMDGPU_UALINK_DROP_SENDER] = "sender",
	[AMDGPU_UALINK_DROP_RECEIVER] = "receiver",
	[AMDGPU_UALINK_DROP_HANDLE] = "handle",
	[AMDGPU_UALINK_DROP_RANGE] = "range",
	[AMDGPU_UALINK_DROP_REASON] = "reason",
	[AMDGPU_UALINK_DROP_FLAGS] = "flags",
	[AMDGPU_UALINK_DROP_UNCONNECTED] = "unconnected",
	[AMDGPU_UALINK_DROP_UNMATCHED] = "unmatched",
	[AMDGPU_UALINK_DROP_MISMATCH] = "mismatch",
	[AMDGPU_UALINK_DROP_RING] = "ring",
};

/**
 * amdgpu_ualink_msg_wire_txn - the transaction number of an encoded message
 * @buf: %AMDGPU_UALINK_MSG_SIZE bytes, any alignment, not checked
 *
 * For tracing what is written to a ring without decoding it again.
 * Returns: the txn field as the wire holds it.
 */
u32 amdgpu_ualink_msg_wire_txn(const void *buf)
{
	return get_unaligned_le32(buf + offsetof(struct amdgpu_ualink_wire, txn));
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_msg_wire_txn);

/**
 * amdgpu_ualink_drop_name - name of a drop reason, for counters
 * @drop: the reason
 *
 * Returns: a lower-case name, or "unknown".
 */
const char *amdgpu_ualink_drop_name(enum amdgpu_ualink_drop drop)
{
	return (unsigned int)drop < ARRAY_SIZE(drop_names) && drop_names[drop] ?
	       drop_names[drop] : "unknown";
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_drop_name);
