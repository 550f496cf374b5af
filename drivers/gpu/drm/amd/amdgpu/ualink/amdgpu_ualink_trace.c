// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The trace events of amdgpu_ualink_trace.h are instantiated here, once
 * for the module.
 */

#define CREATE_TRACE_POINTS
#include "amdgpu_ualink_trace.h"
