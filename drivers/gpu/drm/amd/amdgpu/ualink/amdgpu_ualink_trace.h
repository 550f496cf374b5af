/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Trace events of the UALink core, system "amdgpu_ualink": messages,
 * exports, grants and imports. A handle appears as its low 64 bits only
 * (the exporter's ID and 54 random bits): a trace never holds a whole
 * handle, which would let its reader import the buffer.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM amdgpu_ualink

#if !defined(_AMDGPU_UALINK_TRACE_H_) || defined(TRACE_HEADER_MULTI_READ)
#define _AMDGPU_UALINK_TRACE_H_

#include <linux/tracepoint.h>
#include <linux/types.h>

#include "amdgpu_ualink_msg.h"

TRACE_DEFINE_ENUM(AMDGPU_UALINK_MSG_HELLO);
TRACE_DEFINE_ENUM(AMDGPU_UALINK_MSG_HELLO_ACK);
TRACE_DEFINE_ENUM(AMDGPU_UALINK_MSG_NPA_REQ);
TRACE_DEFINE_ENUM(AMDGPU_UALINK_MSG_NPA_RSP);
TRACE_DEFINE_ENUM(AMDGPU_UALINK_MSG_NPA_FAIL);
TRACE_DEFINE_ENUM(AMDGPU_UALINK_MSG_NPA_REVOKE);
TRACE_DEFINE_ENUM(AMDGPU_UALINK_MSG_NPA_RELEASE);

DECLARE_EVENT_CLASS(amdgpu_ualink_msg,
		    TP_PROTO(u16 self, u16 peer, u16 type, u32 txn),
		    TP_ARGS(self, peer, type, txn),
		    TP_STRUCT__entry(__field(u16, self)
				     __field(u16, peer)
				     __field(u16, type)
				     __field(u32, txn)),
		    TP_fast_assign(__entry->self = self;
				   __entry->peer = peer;
				   __entry->type = type;
				   __entry->txn = txn;),
		    TP_printk("accel=%u peer=%u type=%s txn=%u",
			      __entry->self, __entry->peer,
			      __print_symbolic(__entry->type,
					       { AMDGPU_UALINK_MSG_HELLO, "hello" },
					       { AMDGPU_UALINK_MSG_HELLO_ACK, "hello_ack" },
					       { AMDGPU_UALINK_MSG_NPA_REQ, "npa_req" },
					       { AMDGPU_UALINK_MSG_NPA_RSP, "npa_rsp" },
					       { AMDGPU_UALINK_MSG_NPA_FAIL, "npa_fail" },
					       { AMDGPU_UALINK_MSG_NPA_REVOKE, "npa_revoke" },
					       { AMDGPU_UALINK_MSG_NPA_RELEASE, "npa_release" }),
			      __entry->txn)
);

/* written into the peer's ring (once per copy, retransmissions included) */
DEFINE_EVENT(amdgpu_ualink_msg, amdgpu_ualink_msg_send,
	     TP_PROTO(u16 self, u16 peer, u16 type, u32 txn),
	     TP_ARGS(self, peer, type, txn)
);

/*
 * read from the peer's ring, checked and accepted by the connection
 * layer (which may have sent its answer already: a HELLO_ACK can precede
 * the HELLO's event)
 */
DEFINE_EVENT(amdgpu_ualink_msg, amdgpu_ualink_msg_recv,
	     TP_PROTO(u16 self, u16 peer, u16 type, u32 txn),
	     TP_ARGS(self, peer, type, txn)
);

/* read from the peer's ring and dropped; type and txn 0 if undecodable */
TRACE_EVENT(amdgpu_ualink_msg_drop,
	    TP_PROTO(u16 self, u16 peer, u16 type, u32 txn, const char *reason),
	    TP_ARGS(self, peer, type, txn, reason),
	    TP_STRUCT__entry(__field(u16, self)
			     __field(u16, peer)
			     __field(u16, type)
			     __field(u32, txn)
			     __string(reason, reason)),
	    TP_fast_assign(__entry->self = self;
			   __entry->peer = peer;
			   __entry->type = type;
			   __entry->txn = txn;
			   __assign_str(reason);),
	    TP_printk("accel=%u peer=%u type=%u txn=%u reason=%s",
		      __entry->self, __entry->peer, __entry->type,
		      __entry->txn, __get_str(reason))
);

DECLARE_EVENT_CLASS(amdgpu_ualink_export,
		    TP_PROTO(u16 exporter, u64 handle, u64 size),
		    TP_ARGS(exporter, handle, size),
		    TP_STRUCT__entry(__field(u16, exporter)
				     __field(u64, handle)
				     __field(u64, size)),
		    TP_fast_assign(__entry->exporter = exporter;
				   __entry->handle = handle;
				   __entry->size = size;),
		    TP_printk("accel=%u handle=0x%016llx size=0x%llx",
			      __entry->exporter, __entry->handle, __entry->size)
);

/* a buffer got its handle */
DEFINE_EVENT(amdgpu_ualink_export, amdgpu_ualink_export_create,
	     TP_PROTO(u16 exporter, u64 handle, u64 size),
	     TP_ARGS(exporter, handle, size)
);

/* an ended export is gone: no importer reaches it, its pin is dropped */
DEFINE_EVENT(amdgpu_ualink_export, amdgpu_ualink_export_destroy,
	     TP_PROTO(u16 exporter, u64 handle, u64 size),
	     TP_ARGS(exporter, handle, size)
);

DECLARE_EVENT_CLASS(amdgpu_ualink_access,
		    TP_PROTO(u16 exporter, u16 importer, u64 handle, u64 npa, u64 size),
		    TP_ARGS(exporter, importer, handle, npa, size),
		    TP_STRUCT__entry(__field(u16, exporter)
				     __field(u16, importer)
				     __field(u64, handle)
				     __field(u64, npa)
				     __field(u64, size)),
		    TP_fast_assign(__entry->exporter = exporter;
				   __entry->importer = importer;
				   __entry->handle = handle;
				   __entry->npa = npa;
				   __entry->size = size;),
		    TP_printk("exporter=%u importer=%u handle=0x%016llx npa=0x%llx size=0x%llx",
			      __entry->exporter, __entry->importer, __entry->handle,
			      __entry->npa, __entry->size)
);

/* the exporter let an importer into an export's range */
DEFINE_EVENT(amdgpu_ualink_access, amdgpu_ualink_grant,
	     TP_PROTO(u16 exporter, u16 importer, u64 handle, u64 npa, u64 size),
	     TP_ARGS(exporter, importer, handle, npa, size)
);

/* the importer gave the range back (NPA_RELEASE) */
DEFINE_EVENT(amdgpu_ualink_access, amdgpu_ualink_release,
	     TP_PROTO(u16 exporter, u16 importer, u64 handle, u64 npa, u64 size),
	     TP_ARGS(exporter, importer, handle, npa, size)
);

/* the exporter withdraws the range from an importer (NPA_REVOKE sent) */
DEFINE_EVENT(amdgpu_ualink_access, amdgpu_ualink_revoke,
	     TP_PROTO(u16 exporter, u16 importer, u64 handle, u64 npa, u64 size),
	     TP_ARGS(exporter, importer, handle, npa, size)
);

/* the fabric shut the importer out of the range; ret: its shootdown */
TRACE_EVENT(amdgpu_ualink_shootdown,
	    TP_PROTO(u16 exporter, u16 importer, u64 npa, u64 size, int ret),
	    TP_ARGS(exporter, importer, npa, size, ret),
	    TP_STRUCT__entry(__field(u16, exporter)
			     __field(u16, importer)
			     __field(u64, npa)
			     __field(u64, size)
			     __field(int, ret)),
	    TP_fast_assign(__entry->exporter = exporter;
			   __entry->importer = importer;
			   __entry->npa = npa;
			   __entry->size = size;
			   __entry->ret = ret;),
	    TP_printk("exporter=%u importer=%u npa=0x%llx size=0x%llx ret=%d",
		      __entry->exporter, __entry->importer, __entry->npa,
		      __entry->size, __entry->ret)
);

DECLARE_EVENT_CLASS(amdgpu_ualink_import,
		    TP_PROTO(u16 importer, u16 exporter, u64 handle, u64 npa, u64 size, int error),
		    TP_ARGS(importer, exporter, handle, npa, size, error),
		    TP_STRUCT__entry(__field(u16, importer)
				     __field(u16, exporter)
				     __field(u64, handle)
				     __field(u64, npa)
				     __field(u64, size)
				     __field(int, error)),
		    TP_fast_assign(__entry->importer = importer;
				   __entry->exporter = exporter;
				   __entry->handle = handle;
				   __entry->npa = npa;
				   __entry->size = size;
				   __entry->error = error;),
		    TP_printk("importer=%u exporter=%u handle=0x%016llx npa=0x%llx size=0x%llx error=%d",
			      __entry->importer, __entry->exporter, __entry->handle,
			      __entry->npa, __entry->size, __entry->error)
);

/* a first import of a handle: NPA_REQ is queued */
DEFINE_EVENT(amdgpu_ualink_import, amdgpu_ualink_import_request,
	     TP_PROTO(u16 importer, u16 exporter, u64 handle, u64 npa, u64 size, int error),
	     TP_ARGS(importer, exporter, handle, npa, size, error)
);

/* the exporter granted a range */
DEFINE_EVENT(amdgpu_ualink_import, amdgpu_ualink_import_ready,
	     TP_PROTO(u16 importer, u16 exporter, u64 handle, u64 npa, u64 size, int error),
	     TP_ARGS(importer, exporter, handle, npa, size, error)
);

/* the request failed: error is what the importer's caller gets */
DEFINE_EVENT(amdgpu_ualink_import, amdgpu_ualink_import_failed,
	     TP_PROTO(u16 importer, u16 exporter, u64 handle, u64 npa, u64 size, int error),
	     TP_ARGS(importer, exporter, handle, npa, size, error)
);

/* a ready import was revoked, or its exporter reset or went away */
DEFINE_EVENT(amdgpu_ualink_import, amdgpu_ualink_import_dead,
	     TP_PROTO(u16 importer, u16 exporter, u64 handle, u64 npa, u64 size, int error),
	     TP_ARGS(importer, exporter, handle, npa, size, error)
);
#endif /* _AMDGPU_UALINK_TRACE_H_ */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE amdgpu_ualink_trace
#include <trace/define_trace.h>
