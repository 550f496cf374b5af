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

static int __init amdgpu_ualink_vpod_init(void)
{
	unsigned int i;
	int ret;

	if (!nodes || nodes > AMDGPU_UALINK_VPOD_MAX_DRM ||
	    fabric_nodes > AMDGPU_UALINK_MAX_ACCELS - nodes ||
	    !vram_mb || vram_mb > 1024)
		return -EINVAL;
	ret = amdgpu_ualink_vpod_fabric_init(nodes + fabric_nodes, nodes,
					     (u64)vram_mb << 20, vpod_size,
					     &amdgpu_ualink_vpod_bo_ops);
	if (ret)
		return ret;
	for (i = 0; i < nodes; i++) {
		ret = amdgpu_ualink_vpod_drm_init(amdgpu_ualink_vpod_node(i));
		if (ret)
			goto err;
	}
	amdgpu_ualink_vpod_debugfs_init();
	return 0;

err:
	while (i)
		amdgpu_ualink_vpod_drm_fini(amdgpu_ualink_vpod_node(--i));
	amdgpu_ualink_vpod_fabric_fini();
	return ret;
}

static void __exit amdgpu_ualink_vpod_exit(void)
{
	unsigned int i;

	debugfs_remove_recursive(amdgpu_ualink_vpod->debugfs);
	for (i = 0; i < nodes; i++)
		amdgpu_ualink_vpod_drm_fini(amdgpu_ualink_vpod_node(i));
	amdgpu_ualink_vpod_fabric_fini();
}

module_init(amdgpu_ualink_vpod_init);
module_exit(amdgpu_ualink_vpod_exit);

MODULE_DESCRIPTION("Emulated UALink pod: the amdgpu UALink uAPI without hardware");
MODULE_LICENSE("Dual MIT/GPL");
MODULE_IMPORT_NS(DMA_BUF);
