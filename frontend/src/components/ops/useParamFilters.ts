// List filters kept in the URL's query string (so overview numbers can link to a filtered list).
import { useSearchParams } from 'react-router';

/** get(key) reads a filter, set(key, value) changes it (empty removes it) and calls onChange. */
export function useParamFilters(onChange?: () => void) {
  const [params, setParams] = useSearchParams();
  return {
    get: (key: string) => params.get(key) ?? '',
    set(key: string, value: string) {
      const p = new URLSearchParams(params);
      if (value) p.set(key, value);
      else p.delete(key);
      setParams(p, { replace: true });
      onChange?.();
    },
  };
}
