import '../../shared/runtime/polyfills';
