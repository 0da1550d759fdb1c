import type { Handler } from './types';

/** The devices with their reservations (Core.deviceViews). */
export const info = (({ core }) => core.deviceViews()) satisfies Handler<'info'>;
