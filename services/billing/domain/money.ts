// Billing's money rules are the kit's (kit/handler/money.ts), shared with tips.
export { MAX_MINOR_UNITS, money, requireAmount, requireCurrency } from "../../kit/handler/money.js";
