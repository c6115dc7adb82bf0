"""What Home Assistant's MQTT discovery accepts for the three components we announce, written from
its documentation (https://www.home-assistant.io/integrations/sensor.mqtt/, binary_sensor.mqtt/,
image.mqtt/): required members, member types, and every member it knows, so a misspelt or
invented key is flagged instead of silently ignored by Home Assistant."""

STR, INT, BOOL, LIST, DICT = str, int, bool, list, dict

# Members every MQTT entity may have.
COMMON = {
    "availability": LIST, "availability_mode": STR, "availability_template": STR, "availability_topic": STR,
    "device": DICT, "enabled_by_default": BOOL, "encoding": STR, "entity_category": STR, "entity_picture": STR,
    "icon": STR, "json_attributes_template": STR, "json_attributes_topic": STR, "name": STR, "object_id": STR,
    "default_entity_id": STR, "origin": DICT, "payload_available": STR, "payload_not_available": STR,
    "platform": STR, "qos": INT, "unique_id": STR,
}
STATE = {"state_topic": STR, "value_template": STR, "force_update": BOOL, "expire_after": INT}
COMPONENTS = {
    "sensor": {
        "required": {"state_topic"},
        "members": {**COMMON, **STATE, "device_class": STR, "last_reset_value_template": STR, "options": LIST,
                    "state_class": STR, "suggested_display_precision": INT, "unit_of_measurement": STR},
    },
    "binary_sensor": {
        "required": {"state_topic"},
        "members": {**COMMON, **STATE, "device_class": STR, "off_delay": INT, "payload_off": STR,
                    "payload_on": STR},
        "device_classes": {"battery", "battery_charging", "carbon_monoxide", "cold", "connectivity", "door",
                           "garage_door", "gas", "heat", "light", "lock", "moisture", "motion", "moving",
                           "occupancy", "opening", "plug", "power", "presence", "problem", "running", "safety",
                           "smoke", "sound", "tamper", "update", "vibration", "window"},
    },
    "image": {
        "one_of": {"image_topic", "url_topic"},
        "members": {**COMMON, "content_type": STR, "image_encoding": STR, "image_topic": STR, "url_template": STR,
                    "url_topic": STR},
    },
}
DEVICE = {"configuration_url": STR, "connections": LIST, "hw_version": STR, "identifiers": (LIST, STR),
          "manufacturer": STR, "model": STR, "model_id": STR, "name": STR, "serial_number": STR,
          "suggested_area": STR, "sw_version": STR, "via_device": STR}
AVAILABILITY = {"payload_available": STR, "payload_not_available": STR, "topic": STR, "value_template": STR}


def problems(component, config):
    """What is wrong with `config` (a parsed discovery document) for `component`; [] when nothing."""
    spec = COMPONENTS.get(component)
    if spec is None:
        return [f"unknown component {component}"]
    out = []
    for key, value in config.items():
        expected = spec["members"].get(key)
        if expected is None:
            out.append(f"unknown key {key!r}")
        elif not isinstance(value, expected) or (expected is INT and isinstance(value, bool)):
            out.append(f"{key} is {type(value).__name__}, not {expected}")
    for key in spec.get("required", ()):
        if key not in config:
            out.append(f"required {key} missing")
    if "one_of" in spec and len(spec["one_of"] & config.keys()) != 1:
        out.append(f"exactly one of {sorted(spec['one_of'])} needed")
    if "device_classes" in spec and "device_class" in config and config["device_class"] not in spec["device_classes"]:
        out.append(f"device_class {config['device_class']} unknown")
    if config.get("availability_mode", "latest") not in ("all", "any", "latest"):
        out.append(f"availability_mode {config['availability_mode']}")
    for entry in config.get("availability", []):
        if not isinstance(entry, dict) or "topic" not in entry or set(entry) - AVAILABILITY.keys():
            out.append(f"availability entry {entry}")
    device = config.get("device", {})
    for key, value in device.items():
        if key not in DEVICE or not isinstance(value, DEVICE[key]):
            out.append(f"device.{key} unknown or mistyped")
    if device and not ({"identifiers", "connections"} & device.keys()):
        out.append("device needs identifiers or connections")
    if "unique_id" not in config and device:
        out.append("a device needs the entity's unique_id")
    return out
