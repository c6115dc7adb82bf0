// Element properties declared once. Each element lists its properties in one table (name, nick,
// blurb, range, when it may change, and the Settings field or accessors behind it); the table
// installs the GParamSpecs and is the element's set_property / get_property. The default of a
// field-backed property is the field's initial value in `Settings{}`, so it is written once.
//
// One rule for changes, whatever the element:
//   AnyTime    GST_PARAM_MUTABLE_PLAYING: applied at once (read by the next buffer or event).
//   ReadyOnly  GST_PARAM_MUTABLE_READY: refused in PAUSED and PLAYING with a warning naming the property.
//   NextStart  GST_PARAM_MUTABLE_PLAYING: stored at once, used from the next READY->PAUSED; a change
//              in PAUSED or PLAYING logs a warning saying so.
// Setters and getters run under the object lock (unless declared Lock::Own) and inside the C++/C
// guard: an exception becomes an element error, never a crash. A NULL string sets the default.
#pragma once

#include <gst/gst.h>

#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cxx_boundary.hpp"

namespace taconite::gst {

enum class Mutable { AnyTime, ReadyOnly, NextStart };
enum class Lock { Object, Own };  // Own: the accessors guard their data themselves

// Whether `pspec` (declared `when`) may be set now; warns for a refused or deferred change.
inline bool property_change_allowed(GstElement* element, GParamSpec* pspec, Mutable when) {
  if (when == Mutable::AnyTime) return true;
  GST_OBJECT_LOCK(element);
  // A failed change leaves its target as the pending state (gst_element_abort_state keeps it): the
  // element stays where it was, so a failed READY->PAUSED may be fixed by a set and retried.
  const bool stopped = GST_STATE(element) <= GST_STATE_READY &&
                       (GST_STATE_PENDING(element) <= GST_STATE_READY ||
                        GST_STATE_RETURN(element) == GST_STATE_CHANGE_FAILURE);
  GST_OBJECT_UNLOCK(element);
  if (stopped) return true;
  if (when == Mutable::ReadyOnly) {
    GST_WARNING_OBJECT(element, "property '%s' can only be changed in the NULL or READY state; ignoring",
                       pspec->name);
    return false;
  }
  GST_WARNING_OBJECT(element, "property '%s' changed while running: it takes effect at the next start",
                     pspec->name);
  return true;
}

template <typename Element, typename Settings>
class PropertyTable {
 public:
  using Setter = std::function<void(Element&, Settings&, const GValue*)>;
  using Getter = std::function<void(Element&, const Settings&, GValue*)>;

  // Any property: `make_spec(flags)` builds its GParamSpec with the flags `when` implies.
  PropertyTable& custom(std::function<GParamSpec*(GParamFlags)> make_spec, Mutable when, Setter set, Getter get,
                        Lock lock = Lock::Object) {
    entries_.push_back({std::move(make_spec), when, std::move(set), std::move(get), lock, false});
    return *this;
  }
  // A read-only property (statistics): `get` may read the instance, not only the settings.
  PropertyTable& read_only(std::function<GParamSpec*(GParamFlags)> make_spec, Getter get, Lock lock = Lock::Object) {
    entries_.push_back({std::move(make_spec), Mutable::AnyTime, {}, std::move(get), lock, true});
    return *this;
  }

  // A read-only count (guint64 from 0) that `value` reads from the instance.
  PropertyTable& counter(const char* name, const char* nick, const char* blurb, guint64 (*value)(Element&),
                         Lock lock = Lock::Object) {
    return read_only(
        [=](GParamFlags flags) { return g_param_spec_uint64(name, nick, blurb, 0, G_MAXUINT64, 0, flags); },
        [=](Element& self, const Settings&, GValue* v) { g_value_set_uint64(v, value(self)); }, lock);
  }

  // The typed declarations below take `field`: a pointer to a Settings member, or a generic lambda
  // `[](auto& s) -> auto& { return s.nested.member; }` for a member of a member.
  template <typename Field>
  PropertyTable& string(const char* name, const char* nick, const char* blurb, Field field, Mutable when) {
    const std::string initial = default_of(field);
    return custom(
        [=](GParamFlags flags) { return g_param_spec_string(name, nick, blurb, initial.c_str(), flags); }, when,
        [=](Element&, Settings& s, const GValue* v) {
          const gchar* text = g_value_get_string(v);
          std::invoke(field, s) = text ? text : initial;
        },
        [=](Element&, const Settings& s, GValue* v) { g_value_set_string(v, std::invoke(field, s).c_str()); });
  }
  // A string that may be unset: NULL in GObject (its default), empty in Settings.
  template <typename Field>
  PropertyTable& optional_string(const char* name, const char* nick, const char* blurb, Field field, Mutable when) {
    return custom([=](GParamFlags flags) { return g_param_spec_string(name, nick, blurb, nullptr, flags); }, when,
                  [=](Element&, Settings& s, const GValue* v) {
                    const gchar* text = g_value_get_string(v);
                    std::invoke(field, s) = text ? text : "";
                  },
                  [=](Element&, const Settings& s, GValue* v) {
                    const std::string& text = std::invoke(field, s);
                    g_value_set_string(v, text.empty() ? nullptr : text.c_str());
                  });
  }
  template <typename Field>
  PropertyTable& boolean(const char* name, const char* nick, const char* blurb, Field field, Mutable when) {
    const gboolean initial = default_of(field);
    return custom([=](GParamFlags flags) { return g_param_spec_boolean(name, nick, blurb, initial, flags); }, when,
                  [=](Element&, Settings& s, const GValue* v) { std::invoke(field, s) = g_value_get_boolean(v); },
                  [=](Element&, const Settings& s, GValue* v) { g_value_set_boolean(v, std::invoke(field, s)); });
  }
  template <typename Field>
  PropertyTable& uint(const char* name, const char* nick, const char* blurb, guint min, guint max, Field field,
                      Mutable when) {
    const guint initial = default_of(field);
    return custom([=](GParamFlags flags) { return g_param_spec_uint(name, nick, blurb, min, max, initial, flags); },
                  when, [=](Element&, Settings& s, const GValue* v) { std::invoke(field, s) = g_value_get_uint(v); },
                  [=](Element&, const Settings& s, GValue* v) { g_value_set_uint(v, std::invoke(field, s)); });
  }
  template <typename Field>
  PropertyTable& integer(const char* name, const char* nick, const char* blurb, gint min, gint max, Field field,
                         Mutable when) {
    const gint initial = default_of(field);
    return custom([=](GParamFlags flags) { return g_param_spec_int(name, nick, blurb, min, max, initial, flags); },
                  when, [=](Element&, Settings& s, const GValue* v) { std::invoke(field, s) = g_value_get_int(v); },
                  [=](Element&, const Settings& s, GValue* v) { g_value_set_int(v, std::invoke(field, s)); });
  }
  template <typename Field>
  PropertyTable& uint64(const char* name, const char* nick, const char* blurb, guint64 min, guint64 max, Field field,
                        Mutable when) {
    const guint64 initial = default_of(field);
    return custom(
        [=](GParamFlags flags) { return g_param_spec_uint64(name, nick, blurb, min, max, initial, flags); }, when,
        [=](Element&, Settings& s, const GValue* v) { std::invoke(field, s) = g_value_get_uint64(v); },
        [=](Element&, const Settings& s, GValue* v) { g_value_set_uint64(v, std::invoke(field, s)); });
  }
  template <typename Field>
  PropertyTable& real(const char* name, const char* nick, const char* blurb, double min, double max, Field field,
                      Mutable when) {
    const double initial = default_of(field);
    return custom(
        [=](GParamFlags flags) { return g_param_spec_double(name, nick, blurb, min, max, initial, flags); }, when,
        [=](Element&, Settings& s, const GValue* v) { std::invoke(field, s) = g_value_get_double(v); },
        [=](Element&, const Settings& s, GValue* v) { g_value_set_double(v, std::invoke(field, s)); });
  }
  // A field of an enum type shown to GObject as the registered enum `type` (a function, since the
  // GType is registered lazily).
  template <typename Field>
  PropertyTable& enumeration(const char* name, const char* nick, const char* blurb, GType (*type)(), Field field,
                             Mutable when) {
    using Enum = std::remove_cvref_t<std::invoke_result_t<Field, Settings&>>;
    const Enum initial = default_of(field);
    return custom(
        [=](GParamFlags flags) {
          return g_param_spec_enum(name, nick, blurb, type(), static_cast<gint>(initial), flags);
        },
        when,
        [=](Element&, Settings& s, const GValue* v) { std::invoke(field, s) = static_cast<Enum>(g_value_get_enum(v)); },
        [=](Element&, const Settings& s, GValue* v) { g_value_set_enum(v, static_cast<gint>(std::invoke(field, s))); });
  }

  // At class_init: lets `declare(table)` list the properties of the instance struct's `settings`,
  // installs them (ids in table order) and makes the table the class's set_property and get_property.
  static void install(GObjectClass* klass, Settings* Element::*settings, void (*declare)(PropertyTable&)) {
    static PropertyTable table(settings);  // one per element type, for the life of the class
    declare(table);
    instance_ = &table;
    klass->set_property = set_property;
    klass->get_property = get_property;
    const auto rw = static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
    for (std::size_t i = 0; i < table.entries_.size(); ++i) {
      const Entry& entry = table.entries_[i];
      GParamFlags flags = static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
      if (!entry.read_only)
        flags = static_cast<GParamFlags>(rw | (entry.when == Mutable::ReadyOnly ? GST_PARAM_MUTABLE_READY
                                                                                : GST_PARAM_MUTABLE_PLAYING));
      g_object_class_install_property(klass, static_cast<guint>(i + 1), entry.make_spec(flags));
    }
  }

 private:
  explicit PropertyTable(Settings* Element::*settings) : settings_(settings) {}

  struct Entry {
    std::function<GParamSpec*(GParamFlags)> make_spec;
    Mutable when;
    Setter set;
    Getter get;
    Lock lock;
    bool read_only;
  };

  // The field's value in a default-constructed Settings: the property's default.
  template <typename Field>
  static auto default_of(Field field) {
    const Settings defaults{};
    return std::remove_cvref_t<std::invoke_result_t<Field, const Settings&>>(std::invoke(field, defaults));
  }

  const Entry* entry(guint id) const { return id >= 1 && id <= entries_.size() ? &entries_[id - 1] : nullptr; }

  template <typename Access>
  static void run(GObject* object, const Entry& entry, Access&& access) {
    Element* self = reinterpret_cast<Element*>(object);
    bool_guarded(GST_ELEMENT(object), "Could not access a property.", [&] {
      if (entry.lock == Lock::Own) {
        access(*self, *(self->*instance_->settings_));
        return true;
      }
      GST_OBJECT_LOCK(object);
      try {
        access(*self, *(self->*instance_->settings_));
      } catch (...) {
        GST_OBJECT_UNLOCK(object);
        throw;
      }
      GST_OBJECT_UNLOCK(object);
      return true;
    });
  }

  static void set_property(GObject* object, guint id, const GValue* value, GParamSpec* pspec) {
    const Entry* e = instance_->entry(id);
    if (!e || !e->set) {
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
      return;
    }
    if (!property_change_allowed(GST_ELEMENT(object), pspec, e->when)) return;
    run(object, *e, [&](Element& self, Settings& s) { e->set(self, s, value); });
  }

  static void get_property(GObject* object, guint id, GValue* value, GParamSpec* pspec) {
    const Entry* e = instance_->entry(id);
    if (!e) {
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
      return;
    }
    run(object, *e, [&](Element& self, Settings& s) { e->get(self, s, value); });
  }

  static inline const PropertyTable* instance_ = nullptr;
  Settings* Element::*settings_;
  std::vector<Entry> entries_;
};

}  // namespace taconite::gst
