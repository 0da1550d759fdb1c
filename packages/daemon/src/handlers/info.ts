import type { Handler } from './types';

export const info = (({ core }) => core.devices.views()) satisfies Handler<'info'>;
