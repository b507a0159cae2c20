"""One parse, instead of one per type, of the C types wgpu-py builds its structs from.

wgpu-py makes every C struct with cffi's ``ffi.new("WGPUXxx *")``, and cffi parses each type
string the first time it sees one, by handing pycparser the string together with a typedef
line for every type wgpu-native declares (some 440): about 10 ms a type on a desktop CPU,
0.5 s of a fresh process's first operations (39% of a 50-operation script with warm caches on
lavapipe). pycparser parses a declaration with all of them as parameters in about the time of
one, and cffi's cache takes each result as its own parse would have made it. cffi offers no
public call for this, so :func:`warm` uses its parser and cache (``ffi._parser``,
``ffi._parsed_types``, ``ffi._get_cached_btype``, as ``FFI._typeof_locked`` does): if a cffi
release changes them, nothing is warmed and each type is parsed on first use, as without it.
"""

from __future__ import annotations

import logging

_log = logging.getLogger(__name__)

#: the type strings wgpu-py (0.32) passes to ffi.new and ffi.callback on the way to running,
#: reading and writing ruda's kernels, as it spells them (the trailing space included), and
#: those ruda_wgpu's own calls into wgpu-native use
TYPES = (
    "WGPUStringView *",
    "WGPUInstanceDescriptor *",
    "WGPUAdapter[]",
    "WGPUAdapterInfo *",
    "WGPUChainedStruct *",
    "WGPUNativeLimits *",
    "WGPULimits *",
    "char []",
    "WGPUQueueDescriptor *",
    "WGPUDeviceExtras *",
    "WGPUChainedStruct * ",
    "void(WGPUDevice const *, WGPUDeviceLostReason, WGPUStringView, void *, void *)",
    "WGPUDeviceLostCallbackInfo *",
    "void(WGPUDevice const *, WGPUErrorType, WGPUStringView, void *, void *)",
    "WGPUUncapturedErrorCallbackInfo *",
    "WGPUFeatureName[]",
    "WGPUDeviceDescriptor *",
    "void(WGPURequestDeviceStatus, WGPUDevice, WGPUStringView, void *, void *)",
    "WGPURequestDeviceCallbackInfo *",
    "WGPUBufferDescriptor *",
    "uint8_t []",
    "uintptr_t",
    "uint8_t *",
    "WGPUShaderSourceWGSL *",
    "WGPUShaderModuleDescriptor *",
    "WGPUBufferBindingLayout *",
    "WGPUBindGroupLayoutEntry *",
    "WGPUBindGroupLayoutEntry[]",
    "WGPUBindGroupLayoutDescriptor *",
    "WGPUBindGroupLayout[]",
    "WGPUPipelineLayoutDescriptor *",
    "WGPUComputeState *",
    "WGPUComputePipelineDescriptor *",
    "WGPUBindGroupEntry *",
    "WGPUBindGroupEntry[]",
    "WGPUBindGroupDescriptor *",
    "WGPUCommandEncoderDescriptor *",
    "WGPUComputePassDescriptor *",
    "uint32_t []",
    "WGPUCommandBufferDescriptor *",
    "WGPUCommandBuffer[]",
    "void(WGPUMapAsyncStatus, WGPUStringView, void *, void *)",
    "WGPUBufferMapCallbackInfo *",
    "intptr_t",
    # and those of ruda_wgpu._wait
    "void(WGPUQueueWorkDoneStatus, WGPUStringView, void *, void *)",
    "WGPUQueueWorkDoneCallbackInfo *",
    "void *",
)


def warm() -> int:
    """Parse the :data:`TYPES` cffi has not parsed yet, in one go; returns how many."""
    try:
        from wgpu.backends.wgpu_native._ffi import ffi

        with ffi._lock:
            todo = [cdecl for cdecl in TYPES if cdecl not in ffi._parsed_types]
            if len(todo) < 2:
                return 0
            # the declaration cffi parses for one type, with every type as a parameter
            declaration = "void __dummy(\n" + ",\n".join(todo) + "\n);"
            ast, macros = ffi._parser._parse(declaration)[:2]
            params = ast.ext[-1].type.args.params
            if macros or len(params) != len(todo):
                return 0
            parsed = {}
            for cdecl, param in zip(todo, params, strict=True):
                ctype, _quals = ffi._parser._get_type_and_quals(param.type)
                raw_function = ctype.is_raw_function
                if raw_function:
                    ctype = ctype.as_function_pointer()
                parsed[cdecl] = (ffi._get_cached_btype(ctype), raw_function)
            ffi._parsed_types.update(parsed)
            return len(parsed)
    except Exception as err:  # only a warm-up: cffi parses each type on first use without it
        _log.debug("cffi types not warmed (%s: %s)", type(err).__name__, err)
        return 0
