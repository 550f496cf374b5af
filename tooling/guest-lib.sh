# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Shared by the guest scripts (guest-tests.sh, guest-demo.sh,
# guest-bench.sh); sourced with $mods set to the module build directory.

# insmod resolves no dependencies and the guest has no modules.dep (it runs
# the host's root): load a module after the modules it depends on, found
# through the build directory's modules.order. (Searching the build
# directory with find instead costs 18 s per dependency over 9p under TCG:
# four minutes for amdgpu.ko's thirteen.)
#   load MODULE.ko [PARAMETERS...]
load() {
	local dep obj
	for dep in $(modinfo -F depends "$1" | tr , ' '); do
		# "gpu-sched" in depends= is /sys/module/gpu_sched
		[ -d "/sys/module/$(echo "$dep" | tr - _)" ] && continue
		obj=$(grep -E "(^|/)$dep\.o\$" "$mods/modules.order" | head -n 1)
		[ -n "$obj" ] || { echo "load: $dep (for $1) is not in $mods/modules.order" >&2; return 1; }
		load "$mods/${obj%.o}.ko" || return 1
	done
	insmod "$@"
}
