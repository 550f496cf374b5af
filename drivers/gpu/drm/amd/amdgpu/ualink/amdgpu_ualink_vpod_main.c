// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The emulated UALink pod's module: its parameters, and bringing the pod
 * up and down.
 */

#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/moduleparam.h>

#include "amdgpu_ualink_npa.h"
#include "amdgpu_ualink_vpod.h"
#include "amdgpu_ualink_vpod_shm.h"

static unsigned int nodes = 4;
module_param(nodes, uint, 0444);
MODULE_PARM_DESC(nodes, "Accelerators with a DRM device (1-16, default 4)");

static unsigned int fabric_nodes;
module_param(fabric_nodes, uint, 0444);
MODULE_PARM_DESC(fabric_nodes,
		 "Accelerators without a DRM device, each exporting a 64 KiB heap (default 0; the pod holds 1,024 at most)");

static unsigned int vram_mb = 16;
module_param(vram_mb, uint, 0444);
MODULE_PARM_DESC(vram_mb, "Device memory of each DRM accelerator, MiB (1-1024, default 16)");

static unsigned int vpod_size;
module_param(vpod_size, uint, 0444);
MODULE_PARM_DESC(vpod_size,
		 "Accelerators per virtual pod, in ID order (default 0: one virtual pod)");

static bool shm;
module_param(shm, bool, 0444);
MODULE_PARM_DESC(shm,
		 "The pod spans kernels that share an ivshmem-plain device's memory (default off)");

static unsigned int pod_nodes;
module_param(pod_nodes, uint, 0444);
MODULE_PARM_DESC(pod_nodes,
		 "With shm: accelerators of the pod in all kernels, first_id + nodes to 16 (no default)");

static unsigned int first_id;
module_param(first_id, uint, 0444);
MODULE_PARM_DESC(first_id,
		 "With shm: ID of the first accelerator this kernel hosts (default 0)");

static int __init amdgpu_ualink_vpod_init(void)
{
	struct amdgpu_ualink_vpod_shm *region = NULL;
	unsigned int i, all = nodes + fabric_nodes, first = 0;
	int ret;

	if (!nodes || nodes > AMDGPU_UALINK_VPOD_MAX_DRM ||
	    fabric_nodes > AMDGPU_UALINK_MAX_ACCELS - nodes ||
	    !vram_mb || vram_mb > 1024)
		return -EINVAL;
	if (shm) {
		/* the other kernels' accelerators take the place of heaps */
		if (fabric_nodes || pod_nodes > AMDGPU_UALINK_VPOD_SHM_MAX_NODES ||
		    first_id >= pod_nodes || nodes > pod_nodes - first_id)
			return -EINVAL;
		region = amdgpu_ualink_vpod_shm_map(pod_nodes, (u64)vram_mb << 20,
						    vpod_size);
		if (IS_ERR(region))
			return PTR_ERR(region);
		all = pod_nodes;
		first = first_id;
	} else if (pod_nodes || first_id) {
		return -EINVAL;
	}
	ret = amdgpu_ualink_vpod_fabric_init(all, first, nodes,
					     (u64)vram_mb << 20, vpod_size,
					     &amdgpu_ualink_vpod_bo_ops, region);
	if (ret)
		return ret;
	for (i = 0; i < nodes; i++) {
		ret = amdgpu_ualink_vpod_drm_init(amdgpu_ualink_vpod_node(first + i));
		if (ret)
			goto err;
	}
	amdgpu_ualink_vpod_debugfs_init();
	return 0;

err:
	while (i)
		amdgpu_ualink_vpod_drm_fini(amdgpu_ualink_vpod_node(first + --i));
	amdgpu_ualink_vpod_fabric_fini();
	return ret;
}

static void __exit amdgpu_ualink_vpod_exit(void)
{
	unsigned int i;

	debugfs_remove_recursive(amdgpu_ualink_vpod->debugfs);
	for (i = 0; i < nodes; i++)
		amdgpu_ualink_vpod_drm_fini(amdgpu_ualink_vpod_node(first_id + i));
	amdgpu_ualink_vpod_fabric_fini();
}

module_init(amdgpu_ualink_vpod_init);
module_exit(amdgpu_ualink_vpod_exit);

MODULE_DESCRIPTION("Emulated UALink pod: the amdgpu UALink uAPI without hardware");
MODULE_LICENSE("Dual MIT/GPL");
MODULE_IMPORT_NS("DMA_BUF");
