"""torch.utils of the stand-in torch package: only cpp_extension."""
