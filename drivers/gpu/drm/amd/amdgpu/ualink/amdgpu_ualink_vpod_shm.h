/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The fabric between kernels: a memory region several QEMU guests share
 * (ivshmem), holding the pod's rings, page tables and device memory. See
 * amdgpu_ualink_vpod_shm.c.
 */
#ifndef __AMDGPU_UALINK_VPOD_SHM_H__
#define __AMDGPU_UALINK_VPOD_SHM_H__

#include <linux/types.h>

struct amdgpu_ualink_vpod_ring;
struct amdgpu_ualink_vpod_shm;

/* accelerators of a pod that spans kernels, at most */
#define AMDGPU_UALINK_VPOD_SHM_MAX_NODES	16
/* page-table pages each accelerator has in the region */
#define AMDGPU_UALINK_VPOD_SHM_PT_PAGES		256
/* pages of each accelerator's access table in the region (107 ranges) */
#define AMDGPU_UALINK_VPOD_SHM_ACL_PAGES	4

struct amdgpu_ualink_vpod_shm *
amdgpu_ualink_vpod_shm_map(unsigned int num_nodes, u64 vram_size,
			   unsigned int vpod_size);
void amdgpu_ualink_vpod_shm_unmap(struct amdgpu_ualink_vpod_shm *shm);
struct amdgpu_ualink_vpod_ring *
amdgpu_ualink_vpod_shm_ring(struct amdgpu_ualink_vpod_shm *shm, u16 receiver,
			    u16 sender);
void *amdgpu_ualink_vpod_shm_vram(struct amdgpu_ualink_vpod_shm *shm, u16 id,
				  phys_addr_t *phys);
int amdgpu_ualink_vpod_shm_alloc_table(struct amdgpu_ualink_vpod_shm *shm,
				       u16 id, bool root, u64 **cpu, u64 *addr);
void amdgpu_ualink_vpod_shm_free_table(struct amdgpu_ualink_vpod_shm *shm,
				       u16 id, u64 addr);
const u64 *amdgpu_ualink_vpod_shm_table(struct amdgpu_ualink_vpod_shm *shm,
					u16 id, u64 addr);
const u64 *amdgpu_ualink_vpod_shm_root(struct amdgpu_ualink_vpod_shm *shm,
				       u16 id);
u32 amdgpu_ualink_vpod_shm_boots(struct amdgpu_ualink_vpod_shm *shm, u16 id);
void amdgpu_ualink_vpod_shm_start(struct amdgpu_ualink_vpod_shm *shm, u16 id);
int amdgpu_ualink_vpod_shm_acl_add(struct amdgpu_ualink_vpod_shm *shm, u16 id,
				   u64 first, u64 pages, u16 importer);
void amdgpu_ualink_vpod_shm_acl_set(struct amdgpu_ualink_vpod_shm *shm, u16 id,
				    unsigned int slot, u16 importer,
				    const unsigned long *allowed);
void amdgpu_ualink_vpod_shm_acl_del(struct amdgpu_ualink_vpod_shm *shm, u16 id,
				    unsigned int slot);
void amdgpu_ualink_vpod_shm_refused(struct amdgpu_ualink_vpod_shm *shm, u16 id);
u32 amdgpu_ualink_vpod_shm_refusals(struct amdgpu_ualink_vpod_shm *shm, u16 id);
void amdgpu_ualink_vpod_shm_access_begin(struct amdgpu_ualink_vpod_shm *shm,
					 u16 id, u16 owner);
void amdgpu_ualink_vpod_shm_access_end(struct amdgpu_ualink_vpod_shm *shm,
				       u16 id);
bool amdgpu_ualink_vpod_shm_access_in_flight(struct amdgpu_ualink_vpod_shm *shm,
					     u16 id, u16 owner, u32 *seq);
int amdgpu_ualink_vpod_shm_access_wait(struct amdgpu_ualink_vpod_shm *shm,
				       u16 id, u16 owner, u32 seq,
				       unsigned int timeout_ms);
bool amdgpu_ualink_vpod_shm_acl_allows(struct amdgpu_ualink_vpod_shm *shm,
				       u16 id, u64 page, u16 requester);
int amdgpu_ualink_vpod_shm_poll_start(struct amdgpu_ualink_vpod_shm *shm,
				      void (*poll)(void));
void amdgpu_ualink_vpod_shm_poll_stop(struct amdgpu_ualink_vpod_shm *shm);

#endif /* __AMDGPU_UALINK_VPOD_SHM_H__ */
