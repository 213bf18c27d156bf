// fmt's compiled part, built once for the static launcher (cmake/Dependencies.cmake).
//
// Debian's libfmt-dev ships libfmt.so but no archive, and the launcher links statically. Using fmt
// header-only (FMT_HEADER_ONLY) compiles all of format-inl.h into every file of the library, which
// was about two thirds of a typical file's compile (lib/freshness/freshness.cpp: 10.2 s of CPU
// header-only, 3.3 s without). Here it is compiled once: this file defines what fmt/format.h
// declares for a non-header-only build, the functions of format-inl.h (FMT_FUNC) and the explicit
// instantiations that format.h names `extern template` or that its inline code calls.
#include <fmt/format-inl.h>

#include <locale>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;

template FMT_API auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto thousands_sep_impl<wchar_t>(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;

template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API void vformat_to(buffer<char>&, string_view,
                                 basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);

}  // namespace detail
FMT_END_NAMESPACE
