// What a message may show of a gallery location: never a password. A PostgreSQL connection string
// can hold one in three forms (URI user-info `postgresql://user:SECRET@host/db`, the keyword
// `password=SECRET` or `password='a b'`, the URI query parameter `?password=SECRET`), and libpq's
// own messages (a parse error) quote the string they were given. Every message of the gallery
// library, taconiteidentify and taconite-gallery that names a gallery goes through these.
#pragma once

#include <string>
#include <string_view>

namespace taconite::gallery {

// What replaces a password.
inline constexpr std::string_view kMaskedSecret = "****";

// `location` with every password masked; a file path without one is shown as it is.
std::string displayed_location(std::string_view location);

// `text` (e.g. what libpq said about `location`) with every password masked: each one `location`
// holds (as written and as libpq decodes it), wherever it appears, and anything in `text` that
// reads as a connection string's password.
std::string mask_secrets(std::string_view text, std::string_view location);

}  // namespace taconite::gallery
