import { SnsNotifier } from '../adapters/aws/sns-notifier';

/** The manual-review notifier (SNS). */
export const notifier = () => new SnsNotifier();
