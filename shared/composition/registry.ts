export { forestCheck } from './eudr';
