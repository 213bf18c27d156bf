#pragma once
constexpr float kScale = 2.0f;
