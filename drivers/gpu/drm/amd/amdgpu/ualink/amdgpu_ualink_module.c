// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/seq_file.h>

#include "amdgpu_ualink_npa.h"

/**
 * DOC: Core module
 *
 * amdgpu_ualink.ko holds the hardware-independent UALink core. amdgpu and the
 * emulated pod link against it; it knows nothing of either. Loading it alone
 * creates ``<debugfs>/amdgpu_ualink/npa_layout``, which prints the NPA
 * layout this build uses, so that userspace and test scripts need not
 * hard-code it.
 */

static struct dentry *amdgpu_ualink_debugfs;

static int amdgpu_ualink_npa_layout_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "accelerator_id_bits: %u\n", AMDGPU_UALINK_ACCEL_ID_BITS);
	seq_printf(m, "max_accelerators: %lu\n", AMDGPU_UALINK_MAX_ACCELS);
	seq_printf(m, "npa_bits: %u\n", AMDGPU_UALINK_NPA_BITS);
	seq_printf(m, "window_shift: %u\n", AMDGPU_UALINK_NPA_WINDOW_SHIFT);
	seq_printf(m, "window_size: 0x%llx\n",
		   (u64)AMDGPU_UALINK_NPA_WINDOW_SIZE);
	seq_printf(m, "ring_size: 0x%x\n", AMDGPU_UALINK_RING_SIZE);
	seq_printf(m, "ring_reserve: 0x%llx\n",
		   (u64)AMDGPU_UALINK_NPA_RESERVE);
	seq_printf(m, "page_size: 0x%x\n", AMDGPU_UALINK_NPA_PAGE_SIZE);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(amdgpu_ualink_npa_layout);

static int __init amdgpu_ualink_init(void)
{
	amdgpu_ualink_debugfs = debugfs_create_dir("amdgpu_ualink", NULL);
	debugfs_create_file("npa_layout", 0444, amdgpu_ualink_debugfs, NULL,
			    &amdgpu_ualink_npa_layout_fops);
	return 0;
}

static void __exit amdgpu_ualink_exit(void)
{
	debugfs_remove(amdgpu_ualink_debugfs);
}

module_init(amdgpu_ualink_init);
module_exit(amdgpu_ualink_exit);

MODULE_DESCRIPTION("Hardware-independent UALink core for amdgpu");
MODULE_LICENSE("Dual MIT/GPL");
MODULE_IMPORT_NS("DMA_BUF");
