"""ruda-cuda-fusion: installing it makes lazy, fused execution the default of ``ruda_cuda``.

A Python extra can only add packages, so the extras ``ruda[cuda-fusion]`` and
``ruda[cuda-default]`` select fusion by installing this one, whose ``ruda_cuda.defaults``
entry point ``ruda_cuda`` reads at import. It holds no code; ``RUDA_CUDA_FUSION=0`` or ``1``
still decides when set. See ``ruda_cuda._fusion``.
"""
