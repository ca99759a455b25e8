// Some packages export only the "import" condition: retry with it when the default resolution fails.
module.exports = (request, options) => {
  try {
    return options.defaultResolver(request, options);
  } catch (err) {
    const c = options.conditions;
    if (!c || c.includes('import')) throw err;
    return options.defaultResolver(request, { ...options, conditions: [...c, 'import'] });
  }
};
