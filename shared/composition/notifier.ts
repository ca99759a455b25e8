import { SnsNotifier } from '../adapters/aws/sns-notifier';

/** Notifications (SNS): the cooperative managers' topic and SMS. */
export const notifier = () => new SnsNotifier();
