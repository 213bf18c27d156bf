#pragma once

int attention_tiles(int n);
float scale_factor();
