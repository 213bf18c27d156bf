"""A PyTorch C++/CUDA extension built through nvfresh.

    PYTORCH_NVCC="nvfresh nvcc" python setup.py build_ext --inplace

torch.utils.cpp_extension writes a build.ninja whose CUDA rule is
    nvcc = $PYTORCH_NVCC
    rule cuda_compile
      depfile = $out.d
      deps = gcc
      command = $nvcc --generate-dependencies-with-compile --dependency-output $out.d \
                $cuda_cflags -c $in -o $out $cuda_post_cflags
so every .cu compile goes through nvfresh, which records every input of every pass, rewrites the
depfile completely, and skips nvcc when nothing changed in content. After a build:
    nvfresh check -C build/temp.<platform>       # exit 1 when an object is stale, with the reason
(tests/integration/test_pytorch_style.py runs this exact rule with real nvcc and ninja.)
"""
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="scale_ext",
    ext_modules=[
        CUDAExtension("scale_ext", ["scale_ext.cpp", "scale_kernel.cu"],
                      include_dirs=["include"]),
    ],
    cmdclass={"build_ext": BuildExtension},
)
