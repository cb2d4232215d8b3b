// Home form: the budget field follows the chosen search (unit, range, default).
export function wireBudget(form) {
  if (!form) return;
  const search = form.querySelector("#id_search");
  const budget = form.querySelector("#id_budget");
  const unit = form.querySelector("#budget-unit");
  const apply = (resetValue) => {
    const o = search.selectedOptions[0];
    const fixed = !o.dataset.unit;
    budget.disabled = fixed;
    budget.min = o.dataset.min;
    budget.max = o.dataset.max;
    unit.textContent = fixed ? "(fixed)" : `(${o.dataset.unit}, ${o.dataset.min}–${o.dataset.max})`;
    if (fixed) budget.value = "";
    else if (resetValue || budget.value === "") budget.value = o.dataset.default;
  };
  search.addEventListener("change", () => apply(true));
  apply(false);
}
