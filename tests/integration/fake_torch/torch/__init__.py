"""A stand-in for the torch package in the tests (the real one is a multi-GB CUDA wheel): only
torch.utils.cpp_extension, whose build logic nvfresh.torch subclasses and wraps. See
utils/cpp_extension.py."""
