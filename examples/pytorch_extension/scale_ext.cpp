#include <torch/extension.h>

void launch_scale(float* data, int n);
float scale_factor();

torch::Tensor scale(torch::Tensor input)
{
  auto output = input.contiguous().clone();
  launch_scale(output.data_ptr<float>(), static_cast<int>(output.numel()));
  return output;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
  m.def("scale", &scale, "multiply by kScale on the GPU");
  m.def("scale_factor", &scale_factor, "the kScale scale_kernel.cu was compiled with (host side)");
}
