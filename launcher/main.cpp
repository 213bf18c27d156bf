// Placeholder entry so the skeleton links; replaced by the dispatcher in the next commit.
int main()
{
  return 0;
}
