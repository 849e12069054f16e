/**
 * Small constructors for the ESTree nodes the emitters build. Rule text reaches generated code only
 * through `lit()` (an ESTree Literal, printed by astring with JSON escaping) — never by string
 * concatenation — so a hostile string cannot become code (DESIGN: code generation rule 1).
 */
import type * as ES from 'estree';

export const id = (name: string): ES.Identifier => ({ type: 'Identifier', name });

export function lit(value: string | number | boolean | bigint | null): ES.Expression {
  if (typeof value === 'bigint') {
    if (value < 0n) return unary('-', { type: 'Literal', value: -value, bigint: (-value).toString() });
    return { type: 'Literal', value, bigint: value.toString() };
  }
  if (typeof value === 'number' && (value < 0 || Object.is(value, -0))) return unary('-', { type: 'Literal', value: -value });
  return { type: 'Literal', value };
}

export const unary = (operator: ES.UnaryOperator, argument: ES.Expression): ES.Expression => ({
  type: 'UnaryExpression', operator, prefix: true, argument,
});

export const binary = (operator: ES.BinaryOperator, left: ES.Expression, right: ES.Expression): ES.Expression => ({
  type: 'BinaryExpression', operator, left, right,
});

export const logical = (operator: ES.LogicalOperator, left: ES.Expression, right: ES.Expression): ES.Expression => ({
  type: 'LogicalExpression', operator, left, right,
});

export const call = (callee: ES.Expression, args: ES.Expression[]): ES.Expression => ({
  type: 'CallExpression', callee, arguments: args, optional: false,
});

export const member = (object: ES.Expression, property: string): ES.MemberExpression => ({
  type: 'MemberExpression', object, property: id(property), computed: false, optional: false,
});

export const conditional = (test: ES.Expression, consequent: ES.Expression, alternate: ES.Expression): ES.Expression => ({
  type: 'ConditionalExpression', test, consequent, alternate,
});

export const array = (elements: ES.Expression[]): ES.Expression => ({ type: 'ArrayExpression', elements });

export const constDecl = (name: string, init: ES.Expression): ES.VariableDeclaration => ({
  type: 'VariableDeclaration',
  kind: 'const',
  declarations: [{ type: 'VariableDeclarator', id: id(name), init }],
});

export const fn = (params: string[], body: ES.Expression): ES.FunctionExpression => ({
  type: 'FunctionExpression',
  id: null,
  params: params.map(id),
  body: { type: 'BlockStatement', body: [{ type: 'ReturnStatement', argument: body }] },
  generator: false,
  async: false,
});
