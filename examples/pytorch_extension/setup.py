"""A PyTorch C++/CUDA extension built through nvfresh: the one line that differs from a plain
torch setup.py is the import of BuildExtension.

    python setup.py build_ext --inplace          # scale_ext.<abi>.so next to this file
    python -c "import torch, scale_ext; print(scale_ext.scale(torch.ones(1, device='cuda')))"
    nvfresh check -C build/temp.linux-x86_64-cpython-311   # both .so files, fresh or relink pending

nvfresh.torch.BuildExtension (the python/ package of the nvfresh repository: pip install it, or
put it on PYTHONPATH) puts nvfresh in front of nvcc, runs `nvfresh sync` before torch's ninja, and
records the link of the .so and its --inplace copy. See README.md here.

include_dirs must be absolute: torch's ninja runs in build/temp.*, where "include" is not found.
"""
import os

from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension

from nvfresh.torch import BuildExtension

HERE = os.path.dirname(os.path.abspath(__file__))

setup(
    name="scale_ext",
    ext_modules=[
        CUDAExtension("scale_ext", ["scale_ext.cpp", "scale_kernel.cu"],
                      include_dirs=[os.path.join(HERE, "include")]),
    ],
    cmdclass={"build_ext": BuildExtension},
)
