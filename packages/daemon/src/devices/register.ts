/**
 * Registers the vendor backends compiled into this build with discovery.
 * Each vendor module adds its factory to FACTORIES here.
 */
export function registerBackends(): void {
  // Vendor backends are registered by the device modules (Devices I/II).
}
