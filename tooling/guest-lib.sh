# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Shared by the guest scripts (guest-tests.sh, guest-demo.sh,
# guest-bench.sh); sourced with $mods set to the module build directory.

# insmod resolves no dependencies and the guest has no modules.dep (it runs
# the host's root): load a module after the modules it depends on.
#   load MODULE.ko [PARAMETERS...]
load() {
	local dep
	for dep in $(modinfo -F depends "$1" | tr , ' '); do
		[ -d "/sys/module/$dep" ] && continue
		load "$(find "$mods" -name "$dep.ko" | head -n 1)" || return 1
	done
	insmod "$@"
}
