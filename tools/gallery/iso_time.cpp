#include "iso_time.hpp"

#include <cstdio>

namespace taconite::gallery_cli {

namespace {

constexpr std::int64_t kMsPerDay = 86400000;

// Rounds towards minus infinity (C++ division rounds towards zero).
std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

struct CivilDate {
  std::int64_t year;
  int month, day;
};

// Days since 1970-01-01 to the proleptic Gregorian date: eras of 400 years (146097 days) from
// 0000-03-01, so a leap day is the last day of a year.
CivilDate civil_from_days(std::int64_t days) {
  days += 719468;  // 0000-03-01 to 1970-01-01
  const std::int64_t era = floor_div(days, 146097);
  const std::int64_t day_of_era = days - era * 146097;                                             // 0..146096
  const std::int64_t year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;  // 0..399
  const std::int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);  // 0..365
  const std::int64_t month_from_march = (5 * day_of_year + 2) / 153;                               // 0..11
  const int day = static_cast<int>(day_of_year - (153 * month_from_march + 2) / 5 + 1);
  const int month = static_cast<int>(month_from_march < 10 ? month_from_march + 3 : month_from_march - 9);
  return {year_of_era + era * 400 + (month <= 2 ? 1 : 0), month, day};
}

}  // namespace

std::optional<std::string> iso_utc(std::int64_t unix_ms) {
  if (unix_ms < kEarliestIsoMs || unix_ms > kLatestIsoMs) return std::nullopt;
  const std::int64_t days = floor_div(unix_ms, kMsPerDay);
  const std::int64_t ms_of_day = unix_ms - days * kMsPerDay;  // 0..86399999
  const CivilDate date = civil_from_days(days);
  char text[64];  // room for any value the compiler can imagine; 24 are written
  std::snprintf(text, sizeof text, "%04lld-%02d-%02dT%02lld:%02lld:%02lld.%03lldZ", static_cast<long long>(date.year),
                date.month, date.day, static_cast<long long>(ms_of_day / 3600000),
                static_cast<long long>(ms_of_day / 60000 % 60), static_cast<long long>(ms_of_day / 1000 % 60),
                static_cast<long long>(ms_of_day % 1000));
  return std::string(text);
}

std::string iso_utc_or_invalid(std::int64_t unix_ms) {
  std::optional<std::string> text = iso_utc(unix_ms);
  return text ? *text : "invalid time (" + std::to_string(unix_ms) + " ms)";
}

}  // namespace taconite::gallery_cli
